import {
  BillingError,
  confirmTopup,
  createTopup,
  IdempotencyLeaseLostError,
  RetryLaterError,
  type StartedTopup,
  TopupNotPaidError,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { httpStatusByBillingErrorCode } from '../../http/billing-error-statuses';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc, retryAfterHeader } from '../../http/route-doc';

const createSchema = z.strictObject({ packId: z.string().min(1).max(255) });
const referenceSchema = z.string().regex(/^tu_[A-Za-z0-9]{8,64}$/);

const startedAnswerSchema = z.strictObject({
  reference: z.string(),
  clientSecret: z.string().describe("the PaymentIntent's client secret, for Stripe.js in the browser"),
  status: z.literal('pending'),
});
const confirmedAnswerSchema = z.strictObject({
  reference: z.string(),
  status: z.literal('paid'),
  credited: z.boolean().describe('false when an earlier confirm or the webhook credited it'),
  balance: z.number().int(),
});
const notPaidSchema = z.strictObject({
  error: z.strictObject({ code: z.literal('topup_not_paid'), message: z.string() }),
  paymentStatus: z.string(),
});
const providerErrors = ['stripe_unavailable', 'stripe_request_failed'] as const;
const unavailable = {
  ...errorDoc('top-ups are not configured, or Stripe asked to retry later', ['not_configured', 'retry_later']),
  headers: retryAfterHeader,
};

/** The answer to a billing error, or undefined for one the caller rethrows. */
function billingErrorAnswer(error: unknown): RouteAnswer | undefined {
  // Another attempt runs this request's Idempotency-Key now: the idempotent POST answers 409.
  if (!(error instanceof BillingError) || error instanceof IdempotencyLeaseLostError) return undefined;
  const status: number = httpStatusByBillingErrorCode[error.code];
  const answer = errorAnswer(status, error.code, status >= 500 ? 'the payment provider is unavailable' : error.message);
  if (error instanceof TopupNotPaidError) {
    answer.body = {
      error: { code: 'topup_not_paid', message: error.message },
      paymentStatus: error.paymentStatus,
    } satisfies z.input<typeof notPaidSchema>;
  }
  if (error instanceof RetryLaterError && error.delayMs !== undefined) {
    answer.headers = { 'retry-after': String(Math.ceil(error.delayMs / 1000)) };
  }
  // A retry may get another answer (409 topup_not_paid until the intent succeeded): not final.
  // guard: topup-retryable-answer
  return { ...answer, retryable: error.retryable };
}

/** The 201 of a started top-up; with an Idempotency-Key it commits with the intent's id. */
function toStartedAnswer(topup: StartedTopup) {
  return {
    status: 201,
    body: {
      reference: topup.reference,
      clientSecret: topup.clientSecret,
      status: topup.status,
    } satisfies z.input<typeof startedAnswerSchema>,
  };
}

/**
 * Stripe top-ups: `POST /v1/users/{userId}/topups {packId}` starts one (pending row + PaymentIntent)
 * and `POST /v1/users/{userId}/topups/{reference}/confirm` credits it once the intent succeeded. The
 * top-up, the intent's `metadata.user_id` and the credit are the canonical user's, whichever
 * linked id the path names.
 */
export const topupRoutes = [
  // The pending row commits with the key's recovery point, the intent's id with its answer.
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/topups',
    summary: 'Start a top-up: a pending row and a Stripe PaymentIntent',
    body: createSchema,
    idempotency: 'claimed',
    providerCall: true,
    answers: {
      201: answerDoc('started; pay with the client secret, then confirm', startedAnswerSchema),
      400: errorDoc('a bad body or a pack the catalog does not have', ['invalid_request', 'unknown_pack']),
      502: errorDoc('Stripe is unavailable', providerErrors),
      503: unavailable,
    },
    handler: async ({ user, body, claim }, { db, catalog, stripe }) => {
      if (!catalog) return errorAnswer(503, 'not_configured', 'top-ups are not configured');
      try {
        const topup = await createTopup(
          { db, catalog, stripe },
          { userId: user.userId, packId: body.packId },
          claim && { claim, answer: toStartedAnswer },
        );
        return { ...toStartedAnswer(topup), kept: claim !== undefined };
      } catch (error) {
        return orThrow(billingErrorAnswer(error), error);
      }
    },
  }),
  // Idempotent on its own (the pending → paid transition): its answer is kept after it.
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/topups/{reference}/confirm',
    summary: 'Credit a top-up once its PaymentIntent succeeded',
    params: { reference: referenceSchema },
    idempotency: 'claimed',
    providerCall: true,
    answers: {
      200: answerDoc('paid and credited (once)', confirmedAnswerSchema),
      400: errorDoc('a reference that is not tu_…, or a body with fields (a confirm takes none)', ['invalid_request']),
      404: errorDoc('no such top-up for this user', ['topup_not_found']),
      409: answerDoc('the PaymentIntent has not succeeded (yet); retry after paying', notPaidSchema),
      502: errorDoc('Stripe is unavailable', providerErrors),
      503: unavailable,
    },
    handler: async ({ user, params }, { db, outbox, catalog, stripe }) => {
      if (!catalog) return errorAnswer(503, 'not_configured', 'top-ups are not configured');
      try {
        const confirmed = await confirmTopup(
          { db, outbox, catalog, stripe },
          { userId: user.userId, reference: params.reference },
        );
        return { status: 200, body: confirmed satisfies z.input<typeof confirmedAnswerSchema> };
      } catch (error) {
        return orThrow(billingErrorAnswer(error), error);
      }
    },
  }),
];

function orThrow(answer: RouteAnswer | undefined, error: unknown): RouteAnswer {
  if (answer) return answer;
  throw error;
}
