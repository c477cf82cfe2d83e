import {
  defaultHoldTtlSeconds,
  findHold,
  inUnitOfWork,
  listHolds,
  maxHoldTtlSeconds,
  releaseHold,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { grantReferenceSchema } from '../../http/grant-body';
import { answerDoc, errorDoc } from '../../http/route-doc';
import {
  captureAnswerSchema,
  endAnswerOf,
  holdAnswerOf,
  holdAnswerSchema,
  holdIdSchema,
  holdNotActiveDoc,
  holdNotFoundDoc,
  placeAnswerOf,
  placeAnswerSchema,
  pricedCaptureAnswerOf,
  releaseAnswerDocs,
} from './hold-answers';
import {
  amountSchema,
  featureNameSchema,
  insufficientDoc,
  orSpendLimitDoc,
  quantitiesSchema,
  quantitySchema,
  reasonSchema,
} from './spending-schemas';

const holdBodySchema = z
  .strictObject({
    amount: amountSchema.optional().describe('tokens to reserve (or feature: a hold by estimate)'),
    feature: featureNameSchema
      .optional()
      .describe("a catalog feature: the hold reserves the estimate's cost (docs/features.md)"),
    variant: featureNameSchema.optional(),
    quantity: quantitySchema.optional().describe("the estimate of the feature's one meter"),
    quantities: quantitiesSchema.optional().describe('the estimate per meter'),
    reference: grantReferenceSchema,
    expiresInSeconds: z.number().int().min(1).max(maxHoldTtlSeconds).optional(),
    reason: reasonSchema.optional(),
  })
  .refine((body) => (body.amount === undefined) !== (body.feature === undefined), {
    message: 'give exactly one of amount and feature',
  })
  .refine((body) => body.feature !== undefined || (body.variant ?? body.quantity ?? body.quantities) === undefined, {
    message: 'variant, quantity and quantities go with feature',
  });
const captureBodySchema = z
  .strictObject({
    amount: amountSchema.optional().describe('an amount hold: at most the held amount (default all)'),
    quantity: quantitySchema.optional().describe("a hold by estimate: the actual quantity of its feature's one meter"),
    quantities: quantitiesSchema.optional().describe('a hold by estimate: the actual quantity per meter'),
  })
  .refine((body) => body.amount === undefined || (body.quantity ?? body.quantities) === undefined, {
    message: 'an amount, or the actual quantities of a hold by estimate, not both',
  });
const holdsQuerySchema = z.strictObject({
  status: z.enum(['held', 'captured', 'released', 'expired']).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/**
 * The app's holds (docs/holds.md): `POST /holds`, `POST /holds/{holdId}/capture`,
 * `POST /holds/{holdId}/release`, `GET /holds/{holdId}` and `GET /holds`, under the user. Every
 * POST is idempotent on its own (the hold's reference, the hold's status) and claims its
 * Idempotency-Key, which keeps the answer after it.
 */
export const holdRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/holds',
    summary: 'Reserve tokens for work whose cost is known at the end (docs/holds.md)',
    body: holdBodySchema,
    idempotency: 'claimed',
    answers: {
      201: answerDoc('held', placeAnswerSchema),
      200: answerDoc('the same reference held before: that hold', placeAnswerSchema),
      400: errorDoc('a bad body, or an unknown feature, variant or meter (the known ones named)', [
        'invalid_request',
        'unknown_feature',
      ]),
      402: orSpendLimitDoc(insufficientDoc),
      409: errorDoc('the reference holds another amount or estimate', ['reference_conflict']),
    },
    handler: async ({ user, body }, { holds, spendLimits, placeHold, placePricedHold }) => {
      const placement = {
        userId: user.userId,
        reference: body.reference,
        reason: body.reason ?? 'hold',
        expiresInSeconds: body.expiresInSeconds ?? holds?.defaultTtlSeconds ?? defaultHoldTtlSeconds,
        spendLimits,
      };
      if (body.feature !== undefined) {
        const spec = {
          feature: body.feature,
          variant: body.variant,
          quantity: body.quantity,
          quantities: body.quantities,
        };
        // Through the api's hold batcher too (holdOperationsTogether), priced before it.
        return placeAnswerOf(await placePricedHold({ ...placement, spec }));
      }
      // An amount hold goes through the api's hold batcher (holdOperationsTogether).
      return placeAnswerOf(await placeHold({ ...placement, amount: body.amount as number }));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/holds/{holdId}/capture',
    summary: 'Capture a hold: one debit of at most the held amount, the rest freed',
    params: { holdId: holdIdSchema },
    body: captureBodySchema,
    idempotency: 'claimed',
    answers: {
      200: answerDoc('captured (or captured before: the first answer again)', captureAnswerSchema),
      400: errorDoc('a malformed hold id or body, more than the hold, or an unknown meter', [
        'invalid_request',
        'unknown_feature',
      ]),
      404: holdNotFoundDoc,
      409: holdNotActiveDoc,
    },
    handler: async ({ user, params, body }, { captureHold, capturePricedHold }) => {
      if (body.quantity !== undefined || body.quantities !== undefined) {
        // Through the api's hold batcher, with the placements and amount captures (holdOperationsTogether).
        const result = await capturePricedHold({
          userId: user.userId,
          holdId: params.holdId,
          quantity: body.quantity,
          quantities: body.quantities,
        });
        return pricedCaptureAnswerOf(result, params.holdId);
      }
      // Through the api's hold batcher, with the placements (holdOperationsTogether).
      const result = await captureHold({ userId: user.userId, holdId: params.holdId, amount: body.amount });
      if (result.kind === 'priced') {
        return errorAnswer(
          400,
          'invalid_request',
          `hold ${params.holdId} is held by estimate: capture it with quantity or quantities`,
        );
      }
      return endAnswerOf(result, params.holdId);
    },
  }),
  // A release frees the whole hold: it takes no body, so `{"amount": …}` is refused, never read
  // as a partial release.
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/holds/{holdId}/release',
    summary: 'Release a hold: its tokens are available again, no ledger row',
    params: { holdId: holdIdSchema },
    idempotency: 'claimed',
    answers: releaseAnswerDocs,
    handler: async ({ user, params }, { db, outbox }) => {
      const result = await inUnitOfWork({ db, outbox }, (uow) =>
        releaseHold(uow, { userId: user.userId, holdId: params.holdId }),
      );
      return endAnswerOf(result, params.holdId);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/holds/{holdId}',
    summary: 'One hold',
    params: { holdId: holdIdSchema },
    answers: {
      200: answerDoc('the hold', holdAnswerSchema),
      400: errorDoc('a malformed hold id', ['invalid_request']),
      404: holdNotFoundDoc,
    },
    handler: async ({ user, params }, { db }) => {
      const hold = await findHold(db, user.userId, params.holdId);
      if (!hold) return errorAnswer(404, 'not_found', `no hold ${params.holdId} for this user`);
      return { status: 200, body: holdAnswerOf(hold) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/holds',
    summary: "The user's holds, newest first (status=held: the active ones)",
    query: holdsQuerySchema,
    answers: {
      200: answerDoc('the holds', z.strictObject({ userId: z.string(), holds: z.array(holdAnswerSchema) })),
      400: errorDoc('a bad status or limit', ['invalid_request']),
    },
    handler: async ({ user, query }, { db }) => {
      const holds = await listHolds(db, user.userId, { status: query.status, limit: query.limit });
      return { status: 200, body: { userId: user.requestedId, holds: holds.map(holdAnswerOf) } };
    },
  }),
];
