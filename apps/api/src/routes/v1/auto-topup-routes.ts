import {
  BillingError,
  listAutoTopupAttempts,
  readAutoTopup,
  removeAutoTopup,
  setAutoTopup,
  setUpPaymentMethod,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer } from '../../http/answer';
import {
  attemptsAnswerOf,
  autoTopupAnswerOf,
  autoTopupAnswerSchema,
  autoTopupAttemptsAnswerSchema,
  autoTopupBodySchema,
} from '../../http/auto-topup-body';
import { httpStatusByBillingErrorCode } from '../../http/billing-error-statuses';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc } from '../../http/route-doc';

const setupAnswerSchema = z.strictObject({
  clientSecret: z.string().describe("the SetupIntent's client secret: confirm it with Stripe.js"),
  customerId: z.string().describe("the user's Stripe Customer"),
  setupIntentId: z.string(),
});

/**
 * Auto top-up (docs/auto-topup.md): save a card for off-session charges (`POST
 * /payment-methods/setup`, then `setup_intent.succeeded`), and the settings (`GET`, `PUT`,
 * `DELETE /auto-topup`; PUT and DELETE are idempotent by themselves), and the attempts.
 */
export const autoTopupRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/payment-methods/setup',
    summary: "Create (or reuse) the user's Stripe Customer and a SetupIntent for off-session charges",
    idempotency: 'claimed',
    providerCall: true,
    answers: {
      201: answerDoc(
        'confirm the SetupIntent with Stripe.js; setup_intent.succeeded saves the card',
        setupAnswerSchema,
      ),
      502: errorDoc('Stripe is unavailable or refused the request', ['stripe_unavailable', 'stripe_request_failed']),
      503: errorDoc('Stripe is not configured, or asked to retry later', ['not_configured', 'retry_later']),
    },
    handler: async ({ user }, { db, stripe }) => {
      try {
        const setup = await setUpPaymentMethod({ db, stripe }, user.userId);
        return { status: 201, body: setup satisfies z.input<typeof setupAnswerSchema> };
      } catch (error) {
        if (!(error instanceof BillingError)) throw error;
        const status: number = httpStatusByBillingErrorCode[error.code];
        const answer = errorAnswer(
          status,
          error.code,
          status >= 500 ? 'the payment provider is unavailable' : error.message,
        );
        return { ...answer, retryable: error.retryable };
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/auto-topup',
    summary: 'The auto top-up settings, the saved card, this month’s count and the attempt in flight',
    answers: { 200: answerDoc('the auto top-up (enabled false when never set)', autoTopupAnswerSchema) },
    handler: async ({ user }, { db }) => autoTopupAnswerOf(await readAutoTopup(db, user.userId), user.requestedId),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/users/{userId}/auto-topup',
    summary: 'Set auto top-up: the pack, the threshold, the monthly limit and whether it is on',
    body: autoTopupBodySchema,
    answers: {
      200: answerDoc('the auto top-up as it is now', autoTopupAnswerSchema),
      400: errorDoc('a bad body, or a pack the catalog does not sell through Stripe', [
        'invalid_request',
        'unknown_pack',
      ]),
      503: errorDoc('no catalog is configured', ['not_configured']),
    },
    handler: async ({ user, body }, { db, catalog }) => {
      if (!catalog) return errorAnswer(503, 'not_configured', 'auto top-up is not configured');
      try {
        return autoTopupAnswerOf(await setAutoTopup({ db, catalog }, user.userId, body), user.requestedId);
      } catch (error) {
        if (error instanceof BillingError && error.code === 'unknown_pack') {
          return errorAnswer(400, error.code, error.message);
        }
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/users/{userId}/auto-topup',
    summary: 'Turn auto top-up off and forget its settings (the saved card stays)',
    answers: { 200: answerDoc('the auto top-up as it is now (enabled false)', autoTopupAnswerSchema) },
    handler: async ({ user }, { db }) => autoTopupAnswerOf(await removeAutoTopup(db, user.userId), user.requestedId),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/auto-topup/attempts',
    summary: "The user's auto top-up attempts, newest first",
    answers: { 200: answerDoc('the attempts', autoTopupAttemptsAnswerSchema) },
    handler: async ({ user }, { db }) =>
      attemptsAnswerOf(await listAutoTopupAttempts(db, user.userId), user.requestedId),
  }),
];
