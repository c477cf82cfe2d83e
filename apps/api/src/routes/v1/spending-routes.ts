import { checkSpend, type DebitResult, references, spendPeriods } from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { grantReferenceSchema, maxGrantAmount } from '../../http/grant-body';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { holdRoutes } from './hold-routes';
import {
  amountSchema,
  insufficientDoc,
  orSpendLimitDoc,
  reasonSchema,
  spendRefusalAnswer,
  unknownFeatureAnswer,
} from './spending-schemas';

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
const quantityParam = z.coerce
  .number({ error: 'must be a whole number of zero or more' })
  .int({ error: 'must be a whole number of zero or more' })
  .min(0, { error: 'must be a whole number of zero or more' });
/**
 * Exactly one of amount, studioKind and feature; each bad value named (a union would answer only
 * "Invalid input", and OpenAPI parameters cannot carry one: the document lists all as optional).
 * A feature's meters come as `quantities[meter]=n` (the query parser keeps the brackets in the
 * name), the only other names allowed.
 */
const checkQuerySchema = z
  .object({
    amount: checkAmountSchema.optional().describe('tokens a debit or hold would need (or studioKind, or feature)'),
    studioKind: checkStudioKindSchema
      .optional()
      .describe('the next studio request of this kind (or amount, or feature)'),
    feature: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('the next usage of this catalog feature (docs/features.md); meters as quantities[meter]=n'),
    variant: z.string().min(1).max(64).optional().describe('feature only: its variant'),
    quantity: quantityParam.optional().describe('feature only: the quantity of its one meter'),
  })
  .catchall(z.unknown())
  .superRefine((query, ctx) => {
    const given = [query.amount, query.studioKind, query.feature].filter((value) => value !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', message: 'give exactly one of amount, studioKind and feature' });
    for (const name of Object.keys(query)) {
      if (['amount', 'studioKind', 'feature', 'variant', 'quantity'].includes(name)) continue;
      if (!/^quantities\[[A-Za-z0-9._-]{1,64}\]$/.test(name) || query.feature === undefined) {
        ctx.addIssue({ code: 'custom', message: `unknown parameter "${name}"` });
      } else if (!quantityParam.safeParse(query[name]).success) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'must be a whole number of zero or more' });
      }
    }
  });

/** A feature check's usage spec from the query (`quantities[meter]=n` gathered). */
function featureSpecOf(query: z.output<typeof checkQuerySchema>) {
  const quantities = Object.fromEntries(
    Object.entries(query)
      .map(([name, value]) => [/^quantities\[(.+)\]$/.exec(name)?.[1], Number(value)] as const)
      .filter((entry): entry is [string, number] => entry[0] !== undefined),
  );
  return {
    feature: query.feature as string,
    variant: query.variant,
    quantity: query.quantity,
    quantities: Object.keys(quantities).length > 0 ? quantities : undefined,
  };
}

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
  cost: z
    .number()
    .int()
    .optional()
    .describe('studioKind: the price of the next request of that kind; feature: what its next usage would charge'),
  freeTier: z.boolean().optional().describe('studioKind and feature: whether the free allowance covers it'),
  spendLimit: z
    .strictObject({
      period: z.enum(spendPeriods),
      limit: z.number().int(),
      spent: z.number().int(),
      held: z.number().int(),
      requested: z.number().int(),
      resetsAt: z.string(),
    })
    .optional()
    .describe('the spend limit the spend would pass (allowed is false), as its 402 spend_limit_reached says'),
});

function debitAnswerOf(result: DebitResult): RouteAnswer {
  switch (result.kind) {
    case 'debited':
      return { status: 201, body: result.answer satisfies z.input<typeof debitAnswerSchema> };
    case 'already-debited':
      return { status: 200, body: result.answer satisfies z.input<typeof debitAnswerSchema> };
    default:
      return spendRefusalAnswer(result);
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
      402: orSpendLimitDoc(insufficientDoc),
      409: errorDoc('the reference debited another amount', ['reference_conflict']),
    },
    handler: async ({ user, body }, { debit }) => {
      const result = await debit({
        userId: user.userId,
        reference: references.debit(body.reference),
        amount: body.amount,
        reason: body.reason ?? 'debit',
      });
      return debitAnswerOf(result);
    },
  }),
  ...holdRoutes,
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/check',
    summary:
      'Whether a spend of amount, the next studio request of studioKind, or the next usage of a feature would go through now',
    query: checkQuerySchema,
    answers: {
      200: answerDoc('the check (free allowance included for a studio kind or a feature)', checkAnswerSchema),
      400: errorDoc('not exactly one of amount, studioKind and feature, a bad value, or an unknown feature', [
        'invalid_request',
        'unknown_feature',
      ]),
    },
    handler: async ({ user, query }, { db, studio, spendLimits }) => {
      const { amount, studioKind, feature } = query;
      const check = await checkSpend(
        { db, catalog: studio.catalog, clock: studio.clock, spendLimits },
        feature !== undefined
          ? { userId: user.userId, feature: featureSpecOf(query) }
          : studioKind !== undefined
            ? { userId: user.userId, studioKind }
            : { userId: user.userId, amount: amount as number },
      );
      if ('kind' in check) {
        return check.kind === 'invalid'
          ? errorAnswer(400, 'invalid_request', check.message)
          : unknownFeatureAnswer(check);
      }
      return { status: 200, body: check satisfies z.input<typeof checkAnswerSchema> };
    },
  }),
];
