import { readSpendLimits, setSpendLimits } from '@tally/billing-core';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { spendLimitsAnswerOf, spendLimitsAnswerSchema, spendLimitsBodySchema } from '../../http/spend-limits-body';

/**
 * The user's spend limits (docs/spend-limits.md): `GET /limits` (the limits in force, what was
 * spent, when each resets) and `PUT /limits` (idempotent by itself: the same body again changes
 * nothing, so it takes no Idempotency-Key).
 */
export const limitRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/limits',
    summary: 'The spend limits in force, what was spent this UTC day and month, and when each resets',
    answers: { 200: answerDoc('the limits', spendLimitsAnswerSchema) },
    handler: async ({ user }, { db, spendLimits }) =>
      spendLimitsAnswerOf(await readSpendLimits(db, user.userId, spendLimits), user.requestedId),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/users/{userId}/limits',
    summary: "Set the user's own daily and monthly spend limits (null: the default; absent: unchanged)",
    body: spendLimitsBodySchema,
    answers: {
      200: answerDoc('the limits as they are now', spendLimitsAnswerSchema),
      400: errorDoc('a limit that is not a whole number of tokens, 0 or more, or null; an unknown field', [
        'invalid_request',
      ]),
    },
    handler: async ({ user, body }, { db, spendLimits }) =>
      spendLimitsAnswerOf(await setSpendLimits(db, user.userId, body, spendLimits), user.requestedId),
  }),
];
