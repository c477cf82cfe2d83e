import type {
  CaptureAnswer,
  CapturePricedHoldResult,
  EndHoldResult,
  HoldView,
  PlacePricedHoldResult,
  ReleaseAnswer,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { spendRefusalAnswer, unknownFeatureAnswer } from './spending-schemas';

/** A hold's id in a path: `hold_` and 24 hex digits. */
export const holdIdSchema = z.string().regex(/^hold_[0-9a-f]{24}$/, { message: 'must be a hold id (hold_…)' });

const holdStatusSchema = z.enum(['held', 'captured', 'released', 'expired']);
export const holdAnswerSchema = z.strictObject({
  id: z.string(),
  reference: z.string(),
  amount: z.number().int(),
  reason: z.string(),
  status: holdStatusSchema.describe('expired: held past expiresAt (the database clock); it counts for nothing'),
  expiresAt: z.iso.datetime(),
  captured: z.number().int().nullable(),
  released: z.number().int().nullable(),
  ledgerReference: z.string().nullable().describe('hold:{id}:capture once captured'),
  createdAt: z.iso.datetime(),
  settledAt: z.iso.datetime().nullable(),
});
export const placeAnswerSchema = z.strictObject({
  id: z.string(),
  reference: z.string(),
  amount: z.number().int(),
  status: holdStatusSchema,
  expiresAt: z.iso.datetime(),
  available: z.number().int(),
});
export const captureAnswerSchema = z.strictObject({
  id: z.string(),
  status: z.literal('captured'),
  captured: z.number().int(),
  released: z.number().int(),
  ledgerReference: z.string(),
  balance: z.number().int(),
  available: z.number().int(),
  cost: z.number().int().optional().describe("a hold by estimate: the actual cost at the hold's prices"),
  quantities: z.record(z.string(), z.number().int()).optional().describe('a hold by estimate: the actual quantities'),
  excess: z
    .number()
    .int()
    .optional()
    .describe('a hold by estimate: the cost past the hold, taken from what was available'),
  debt: z.number().int().optional().describe('a hold by estimate: what of the excess could not be taken (owed)'),
});
const releaseAnswerSchema = z.strictObject({
  id: z.string(),
  status: z.literal('released'),
  available: z.number().int(),
});
export const holdNotActiveDoc = errorDoc('the hold was released, captured or has expired', ['hold_not_active']);
export const holdNotFoundDoc = errorDoc('no such hold for this user', ['not_found']);

/** The answer of a capture or release, for the routes that answer one (the app's and support's). */
export const releaseAnswerDocs = {
  200: answerDoc('released (or released before: the first answer again)', releaseAnswerSchema),
  400: errorDoc('a malformed hold id, or a body with fields (a release takes none)', ['invalid_request']),
  404: holdNotFoundDoc,
  409: holdNotActiveDoc,
};

/** A hold as the API answers it (docs/interface.md). */
export function holdAnswerOf(hold: HoldView): z.input<typeof holdAnswerSchema> {
  return {
    id: hold.id,
    reference: hold.reference,
    amount: hold.amount,
    reason: hold.reason,
    status: hold.status,
    expiresAt: hold.expiresAt.toISOString(),
    captured: hold.captured,
    released: hold.released,
    ledgerReference: hold.ledgerReference,
    createdAt: hold.createdAt.toISOString(),
    settledAt: hold.settledAt?.toISOString() ?? null,
  };
}

export function placeAnswerOf(result: PlacePricedHoldResult): RouteAnswer {
  switch (result.kind) {
    case 'unknown-feature':
      return unknownFeatureAnswer(result);
    case 'invalid':
      return errorAnswer(400, 'invalid_request', result.message);
    case 'placed':
    case 'existing': {
      const { id, reference, amount, status, expiresAt } = holdAnswerOf(result.hold);
      return {
        status: result.kind === 'placed' ? 201 : 200,
        body: { id, reference, amount, status, expiresAt, available: result.available } satisfies z.input<
          typeof placeAnswerSchema
        >,
      };
    }
    default:
      return spendRefusalAnswer(result);
  }
}

/** The answer of a capture or release (the app's, and support's release: docs/interface.md). */
export function endAnswerOf(result: EndHoldResult<CaptureAnswer | ReleaseAnswer>, holdId: string): RouteAnswer {
  switch (result.kind) {
    case 'ended':
    case 'already':
      return { status: 200, body: result.answer };
    case 'not-active':
      return errorAnswer(409, 'hold_not_active', `hold ${holdId} is ${result.status}`);
    case 'not-found':
      return errorAnswer(404, 'not_found', `no hold ${holdId} for this user`);
    case 'too-much':
      return errorAnswer(400, 'invalid_request', `amount: at most the held ${result.amount} tokens can be captured`);
  }
}

/** The answer of a capture of a hold by estimate (its actual cost, excess and debt added). */
export function pricedCaptureAnswerOf(result: CapturePricedHoldResult, holdId: string): RouteAnswer {
  switch (result.kind) {
    case 'not-priced':
      return errorAnswer(
        400,
        'invalid_request',
        `hold ${holdId} holds an amount: capture it with amount, not quantities`,
      );
    case 'unknown-feature':
      return unknownFeatureAnswer(result);
    case 'invalid':
      return errorAnswer(400, 'invalid_request', result.message);
    default:
      return endAnswerOf(result, holdId);
  }
}
