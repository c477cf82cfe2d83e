import { Router } from 'express';
import { z } from 'zod';
import { sendAnswer } from '../../http/answer';
import { parseOr400, refusedBodyFields, userIdSchema } from '../../http/params';
import type { RouteDoc } from '../../http/route-doc';
import { endAnswerOf, holdIdSchema, releaseAnswerDocs } from '../v1/spending-routes';
import { runHoldRelease } from './hold-actions';
import type { LotActionDeps } from './lot-actions';

export const holdAdminRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/admin/users/{userId}/holds/{holdId}/release',
    summary: "Support's release of a hold (audited), answering as the app's release does",
    params: z.object({ userId: userIdSchema, holdId: holdIdSchema }),
    answers: releaseAnswerDocs,
  },
];

/**
 * `POST /admin/users/{userId}/holds/{holdId}/release` (docs/holds.md "Support"): support's release
 * of a hold, one transaction with its audit row, answering as the app's release does.
 */
export function createHoldAdminRoutes(deps: LotActionDeps): Router {
  const router = Router();
  router.post('/users/:userId/holds/:holdId/release', async (req, res) => {
    const userId = parseOr400(res, userIdSchema, req.params.userId);
    if (userId === undefined) return;
    const holdId = parseOr400(res, holdIdSchema, req.params.holdId);
    if (holdId === undefined || refusedBodyFields(req, res)) return;
    const answerOf = (result: Parameters<typeof endAnswerOf>[0]) => endAnswerOf(result, holdId);
    const result = await runHoldRelease(req, res, deps, { userId, holdId }, (result) => {
      const answer = answerOf(result);
      return { statusCode: answer.status, body: answer.body };
    });
    sendAnswer(res, answerOf(result));
  });
  return router;
}
