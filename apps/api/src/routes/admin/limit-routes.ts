import { adminActions, readSpendLimits, resolveUserId, setSpendLimits } from '@tally/billing-core';
import { defineRoute } from '../../http/define-route';
import { userIdSchema } from '../../http/params';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { spendLimitsAnswerOf, spendLimitsAnswerSchema, spendLimitsBodySchema } from '../../http/spend-limits-body';

/**
 * Support's side of the spend limits (docs/spend-limits.md): read them, and set them in one
 * transaction with the audit row (`spend_limits.set`), for the canonical user of the id, as the
 * app's routes do.
 */
export const limitAdminRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/users/{userId}/limits',
    summary: "A user's spend limits, what they spent this UTC day and month, and when each resets",
    params: { userId: userIdSchema },
    answers: { 200: answerDoc('the limits', spendLimitsAnswerSchema) },
    handler: async ({ params }, { db, spendLimits }) =>
      spendLimitsAnswerOf(
        await readSpendLimits(db, await resolveUserId(db, params.userId), spendLimits),
        params.userId,
      ),
  }),
  defineRoute({
    method: 'put',
    path: '/admin/users/{userId}/limits',
    summary: "Support sets a user's own spend limits (audited; null: the default; absent: unchanged)",
    params: { userId: userIdSchema },
    body: spendLimitsBodySchema,
    // guard: audit-admin-limits-route
    audit: { action: adminActions.spendLimitsSet, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    answers: {
      200: answerDoc('the limits as they are now', spendLimitsAnswerSchema),
      400: errorDoc('a limit that is not a whole number of tokens, 0 or more, or null; an unknown field', [
        'invalid_request',
      ]),
    },
    handler: async ({ params, body, audited }, { spendLimits }) => {
      const view = await audited(
        async (trx) => setSpendLimits(trx, await resolveUserId(trx, params.userId), body, spendLimits),
        (view) => ({ statusCode: 200, body: spendLimitsAnswerOf(view, params.userId).body }),
      );
      return spendLimitsAnswerOf(view, params.userId);
    },
  }),
];
