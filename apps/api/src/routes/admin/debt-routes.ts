import {
  adminActions,
  forgiveDebt,
  handOffCommitted,
  openUnitOfWork,
  resolveUserId,
  type UnitOfWork,
} from '@tally/billing-core';
import { z } from 'zod';
import { defineRoute } from '../../http/define-route';
import { supportNoteSchema, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc } from '../../http/route-doc';

const forgiveBodySchema = z.strictObject({
  amount: z
    .number()
    .int()
    .positive()
    .max(1_000_000_000)
    .optional()
    .describe('tokens to forgive (default all of the debt); more than the debt forgives the debt'),
  note: supportNoteSchema,
});

const forgiveAnswerSchema = z.strictObject({
  userId: z.string(),
  forgiven: z.number().int().describe('tokens forgiven now (0 when there was no debt)'),
  debt: z.number().int().describe('the debt left'),
});

/**
 * `POST /admin/users/{userId}/debt/forgive {amount?, note}` (docs/debt.md "Forgiving"): support
 * forgives the user's debt, oldest sources first, in one transaction with its audit row. Not
 * idempotent by a reference: a second call forgives what is owed by then (the audit keeps each).
 */
export const debtAdminRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/users/{userId}/debt/forgive',
    summary: "Forgive a user's debt (all of it, or an amount), audited",
    params: { userId: userIdSchema },
    body: forgiveBodySchema,
    // guard: audit-debt-forgive-route
    audit: { action: adminActions.debtForgive, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    answers: {
      200: answerDoc('forgiven (0 when the user owed nothing)', forgiveAnswerSchema),
      400: errorDoc('a bad user id or body (the note is required)', ['invalid_request']),
    },
    handler: async ({ params, body, audited }, services) => {
      let uow: UnitOfWork | undefined;
      const answer = await audited(
        async (trx) => {
          uow = openUnitOfWork(trx, services.outbox);
          const userId = await resolveUserId(trx, params.userId);
          const result = await forgiveDebt(uow, { userId, amount: body.amount });
          return { statusCode: 200, body: { userId: params.userId, ...result } };
        },
        (result) => result,
      );
      await handOffCommitted(services.outbox, uow);
      return { status: answer.statusCode, body: answer.body as z.input<typeof forgiveAnswerSchema> };
    },
  }),
];
