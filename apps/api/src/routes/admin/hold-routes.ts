import { adminActions } from '@tally/billing-core';
import { defineRoute } from '../../http/define-route';
import { userIdSchema } from '../../http/params';
import { endAnswerOf, holdIdSchema, releaseAnswerDocs } from '../v1/hold-answers';
import { runHoldRelease } from './hold-actions';

/**
 * `POST /admin/users/{userId}/holds/{holdId}/release` (docs/holds.md "Support"): support's release
 * of a hold, one transaction with its audit row, answering as the app's release does.
 */
export const holdAdminRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/users/{userId}/holds/{holdId}/release',
    summary: "Support's release of a hold (audited), answering as the app's release does",
    params: { userId: userIdSchema, holdId: holdIdSchema },
    // guard: audit-admin-release-route
    audit: { action: adminActions.holdRelease, target: { kind: 'hold', param: 'holdId' }, inTransaction: true },
    answers: releaseAnswerDocs,
    handler: async ({ params, audited }, services) => {
      const result = await runHoldRelease(audited, services, params, (result) => {
        const answer = endAnswerOf(result, params.holdId);
        return { statusCode: answer.status, body: answer.body };
      });
      return endAnswerOf(result, params.holdId);
    },
  }),
];
