import { maxUsageReportDays, type RecordUsageResult, reportUsage } from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { grantReferenceSchema } from '../../http/grant-body';
import { answerDoc, errorDoc } from '../../http/route-doc';
import {
  featureNameSchema,
  orSpendLimitDoc,
  quantitiesSchema,
  quantitySchema,
  spendRefusalAnswer,
  unknownFeatureAnswer,
} from './spending-schemas';

const usageBodySchema = z
  .strictObject({
    feature: featureNameSchema.describe('a feature of the catalog'),
    variant: featureNameSchema.optional().describe('the variant, for a feature priced by variant'),
    quantity: quantitySchema.optional().describe("the feature's one meter (default 1 for a feature counted in uses)"),
    quantities: quantitiesSchema.optional().describe('a quantity per meter'),
    reference: grantReferenceSchema,
  })
  .refine((body) => body.quantity === undefined || body.quantities === undefined, {
    message: 'give quantity or quantities, not both',
  });

const drawSchema = z.strictObject({ lotId: z.number().int(), amount: z.number().int() });
const usageAnswerSchema = z.strictObject({
  ledgerReference: z.string().describe('usage:{reference}'),
  feature: z.string(),
  variant: z.string().nullable(),
  quantities: z.record(z.string(), z.number().int()),
  cost: z.number().int().describe('tokens charged: 0 inside the free allowance'),
  freeTier: z.boolean(),
  priceVersion: z.string().describe("the catalog's version the use was priced at"),
  balance: z.number().int().describe('the balance right after the use (the same on every retry)'),
  available: z.number().int(),
  draws: z.array(drawSchema).describe('what the debit drew from each lot, in the order drawn'),
});
const dateSchema = z.iso.date({ error: 'must be a UTC date YYYY-MM-DD' });
/** `from` and `to`, UTC dates, both included, at most maxUsageReportDays apart. */
export const usageRangeSchema = z
  .strictObject({ from: dateSchema, to: dateSchema })
  .refine((range) => range.from <= range.to, { message: 'from is after to' })
  .refine((range) => (Date.parse(range.to) - Date.parse(range.from)) / 86_400_000 < maxUsageReportDays, {
    message: `a report covers at most ${maxUsageReportDays} days`,
  });
export const usageDaySchema = z.strictObject({
  date: z.string().describe('the UTC day'),
  feature: z.string(),
  variant: z.string().nullable(),
  uses: z
    .number()
    .int()
    .describe('uses that succeeded (usages, captured holds by estimate, studio requests that did not fail)'),
  freeUses: z.number().int(),
  quantities: z.record(z.string(), z.number().int()).describe("each meter's quantities summed"),
  tokens: z.number().int().describe('tokens charged'),
  users: z.number().int().optional().describe('the admin report: distinct users'),
});
const insufficientUsageSchema = z.strictObject({
  error: z.strictObject({ code: z.literal('insufficient_balance'), message: z.string() }),
  cost: z.number().int(),
  available: z.number().int(),
});

function usageAnswerOf(result: RecordUsageResult): RouteAnswer {
  switch (result.kind) {
    case 'recorded':
      return { status: 201, body: result.answer satisfies z.input<typeof usageAnswerSchema> };
    case 'already-recorded':
      return { status: 200, body: result.answer satisfies z.input<typeof usageAnswerSchema> };
    case 'conflict':
    case 'spend-limit':
      return spendRefusalAnswer(result);
    case 'unknown-feature':
      return unknownFeatureAnswer(result);
    case 'invalid':
      return errorAnswer(400, 'invalid_request', result.message);
    case 'insufficient':
      return {
        status: 402,
        body: {
          error: {
            code: 'insufficient_balance',
            message: `the use costs ${result.cost} tokens and the wallet has ${result.available} available`,
          },
          cost: result.cost,
          available: result.available,
        } satisfies z.input<typeof insufficientUsageSchema>,
      };
  }
}

/**
 * Priced usage (docs/features.md): `POST /usage` records one use of a catalog feature, priced by
 * the catalog, under `usage:{reference}` (the reference is its fence, with or without an
 * Idempotency-Key, which claims the answer after it).
 */
export const usageRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/usage',
    summary: 'Record a use of a catalog feature, priced by the catalog (docs/features.md)',
    body: usageBodySchema,
    idempotency: 'claimed',
    answers: {
      201: answerDoc('recorded and charged', usageAnswerSchema),
      200: answerDoc(
        'the same reference and usage recorded before: its answer, nothing more charged',
        usageAnswerSchema,
      ),
      400: errorDoc('a bad body, or an unknown feature, variant or meter (the known ones named)', [
        'invalid_request',
        'unknown_feature',
      ]),
      402: orSpendLimitDoc(answerDoc('available is short of the cost (both in the answer)', insufficientUsageSchema)),
      409: errorDoc('the reference recorded another usage', ['reference_conflict']),
    },
    handler: async ({ user, body }, { recordUsage }) => {
      const result = await recordUsage({
        userId: user.userId,
        reference: body.reference,
        spec: { feature: body.feature, variant: body.variant, quantity: body.quantity, quantities: body.quantities },
      });
      return usageAnswerOf(result);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/usage',
    summary: 'The user\'s uses per UTC day and feature (docs/features.md "Reports")',
    query: usageRangeSchema,
    answers: {
      200: answerDoc('the days with uses', z.strictObject({ userId: z.string(), days: z.array(usageDaySchema) })),
      400: errorDoc('a bad date, from after to, or more than 366 days', ['invalid_request']),
    },
    handler: async ({ user, query }, { db }) => {
      const days = await reportUsage(db, { userId: user.userId, from: query.from, to: query.to });
      return { status: 200, body: { userId: user.requestedId, days } };
    },
  }),
];
