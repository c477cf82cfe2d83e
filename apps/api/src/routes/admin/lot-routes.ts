import { Router } from 'express';
import { z } from 'zod';
import { sendAnswer } from '../../http/answer';
import { adminGrantBodySchema, grantAnswerDocs, grantAnswerOf } from '../../http/grant-body';
import { eventIdSchema, parseOr400, refusedBodyFields, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc, type RouteDoc } from '../../http/route-doc';
import { type LotActionDeps, runAdminGrant, runLotVoid, voidAnswerOf, voidAnswerSchema } from './lot-actions';

export const lotAdminRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/admin/users/{userId}/grants',
    summary: "Support's grant of promotional tokens (a reference is generated when none is given)",
    params: z.object({ userId: userIdSchema }),
    body: adminGrantBodySchema,
    answers: grantAnswerDocs,
  },
  {
    method: 'post',
    path: '/admin/users/{userId}/lots/{lotId}/void',
    summary: 'Take back what is left of one lot',
    params: z.object({ userId: userIdSchema, lotId: eventIdSchema }),
    answers: {
      200: answerDoc('voided (or voided before: the first void, `alreadyVoided: true`)', voidAnswerSchema),
      400: errorDoc('a bad user or lot id, or a body with fields (a void takes none)', ['invalid_request']),
      404: errorDoc('no such lot for this user', ['not_found']),
    },
  },
];

/**
 * `POST /admin/users/{userId}/grants` and `POST /admin/users/{userId}/lots/{lotId}/void`
 * (docs/lots.md "Grants"), each one transaction with its audit row.
 */
export function createLotAdminRoutes(deps: LotActionDeps): Router {
  const router = Router();
  router.post('/users/:userId/grants', async (req, res) => {
    const userId = parseOr400(res, userIdSchema, req.params.userId);
    const body = parseOr400(res, adminGrantBodySchema, req.body ?? {});
    if (userId === undefined || body === undefined) return;
    const result = await runAdminGrant(req, res, deps, { userId, body }, (result) => {
      const answer = grantAnswerOf(result);
      return { statusCode: answer.status, body: answer.body };
    });
    sendAnswer(res, grantAnswerOf(result));
  });
  router.post('/users/:userId/lots/:lotId/void', async (req, res) => {
    const userId = parseOr400(res, userIdSchema, req.params.userId);
    const lotId = parseOr400(res, eventIdSchema, req.params.lotId);
    if (userId === undefined || lotId === undefined) return;
    if (refusedBodyFields(req, res)) return;
    const answer = voidAnswerOf(await runLotVoid(req, res, deps, { userId, lotId }, voidAnswerOf));
    res.status(answer.statusCode).json(answer.body);
  });
  return router;
}
