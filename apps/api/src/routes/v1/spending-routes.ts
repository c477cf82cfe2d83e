import { checkSpend, type DebitResult, debitTokens, references } from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { grantReferenceSchema, maxGrantAmount } from '../../http/grant-body';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { holdRoutes } from './hold-routes';
import { amountSchema, insufficientAnswer, insufficientDoc, reasonSchema } from './spending-schemas';

const debitBodySchema = z.strictObject({
  amount: amountSchema,
  reference: grantReferenceSchema,
  reason: reasonSchema.optional(),
});
const wholeTokens = { error: `must be a whole number of tokens from 1 to ${maxGrantAmount}` };
const checkAmountSchema = z.coerce
  .number(wholeTokens)
  .int(wholeTokens)
  .positive(wholeTokens)
  .max(maxGrantAmount, wholeTokens);
const checkStudioKindSchema = z.enum(['image_edit', 'music_clip', 'music_full']);
/**
 * Exactly one of the two; each bad value named (a union would answer only "Invalid input", and
 * OpenAPI parameters cannot carry one: the document lists both as optional).
 */
const checkQuerySchema = z
  .strictObject({
    amount: checkAmountSchema.optional().describe('tokens a debit or hold would need (or studioKind)'),
    studioKind: checkStudioKindSchema.optional().describe('the next studio request of this kind (or amount)'),
  })
  .refine((query) => (query.amount === undefined) !== (query.studioKind === undefined), {
    message: 'give exactly one of amount and studioKind',
  });

const drawSchema = z.strictObject({ lotId: z.number().int(), amount: z.number().int() });
const debitAnswerSchema = z.strictObject({
  ledgerReference: z.string().describe('debit:{reference}'),
  amount: z.number().int(),
  balance: z.number().int().describe('the balance right after the debit (the same on every retry)'),
  available: z.number().int().describe('balance less active holds: right after a new debit, now on a retry'),
  draws: z.array(drawSchema).describe('what the debit drew from each lot, in the draw order'),
});
const checkAnswerSchema = z.strictObject({
  allowed: z.boolean(),
  amount: z.number().int().describe('what the spend would debit (a studio request: its cost, 0 on the free tier)'),
  balance: z.number().int(),
  held: z.number().int(),
  available: z.number().int(),
  cost: z.number().int().optional().describe('studioKind only: the price of the next request of that kind'),
  freeTier: z.boolean().optional().describe('studioKind only: whether the free allowance covers it'),
});

function debitAnswerOf(result: DebitResult): RouteAnswer {
  switch (result.kind) {
    case 'debited':
      return { status: 201, body: result.answer satisfies z.input<typeof debitAnswerSchema> };
    case 'already-debited':
      return { status: 200, body: result.answer satisfies z.input<typeof debitAnswerSchema> };
    case 'conflict':
      return errorAnswer(409, 'reference_conflict', result.message);
    case 'insufficient':
      return insufficientAnswer(result.available, result.requested);
  }
}

/**
 * The app's own spending (docs/holds.md): `POST /debits`, the holds (hold-routes.ts) and
 * `GET /check`, under the user. A debit is idempotent on its own (its ledger reference) and
 * claims its Idempotency-Key, which keeps the answer after it.
 */
export const spendingRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/debits',
    summary: 'Debit tokens under a reference of the app (docs/holds.md "Debits")',
    body: debitBodySchema,
    idempotency: 'claimed',
    answers: {
      201: answerDoc('debited', debitAnswerSchema),
      200: answerDoc(
        'the same reference and amount debited before: its answer, nothing more debited',
        debitAnswerSchema,
      ),
      400: errorDoc('a bad body', ['invalid_request']),
      402: insufficientDoc,
      409: errorDoc('the reference debited another amount', ['reference_conflict']),
    },
    handler: async ({ user, body }, { db, outbox }) => {
      const result = await debitTokens(
        { db, outbox },
        {
          userId: user.userId,
          reference: references.debit(body.reference),
          amount: body.amount,
          reason: body.reason ?? 'debit',
        },
      );
      return debitAnswerOf(result);
    },
  }),
  ...holdRoutes,
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/check',
    summary: 'Whether a spend of amount, or the next studio request of studioKind, would go through now',
    query: checkQuerySchema,
    answers: {
      200: answerDoc('the check (free allowance included for a studio kind)', checkAnswerSchema),
      400: errorDoc('neither amount nor studioKind, both, or a bad value', ['invalid_request']),
    },
    handler: async ({ user, query }, { db, studio }) => {
      const { amount, studioKind } = query;
      const check: z.input<typeof checkAnswerSchema> = await checkSpend(
        { db, catalog: studio.catalog, clock: studio.clock },
        studioKind !== undefined
          ? { userId: user.userId, studioKind }
          : { userId: user.userId, amount: amount as number },
      );
      return { status: 200, body: check };
    },
  }),
];
