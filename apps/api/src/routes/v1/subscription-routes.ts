import { randomUUID } from 'node:crypto';
import {
  BillingError,
  findSubscription,
  RetryLaterError,
  subscriptionUpdatedDataSchema,
  syncRevenueCatSubscriptionOnDemand,
  systemClock,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { httpStatusByBillingErrorCode } from '../../http/billing-error-statuses';
import { defineRoute } from '../../http/define-route';
import { answerDoc, errorDoc, retryAfterHeader } from '../../http/route-doc';

/** The subscription as the app sees it: the same shape as the data of `subscription.updated`. */
const subscriptionAnswerSchema = subscriptionUpdatedDataSchema;

const syncAnswerSchema = z.strictObject({
  userId: z.string(),
  result: z.enum(['changed', 'already_synchronized', 'no_subscription', 'stale_read']),
  subscription: subscriptionAnswerSchema.omit({ userId: true }).nullable(),
});

/** The answer to a sync failure: unknown user 404, not configured 503, RevenueCat 429 → 503 + Retry-After, unavailable or rejected 502. */
function syncErrorAnswer(error: unknown): RouteAnswer {
  if (error instanceof RetryLaterError) {
    const answer = errorAnswer(503, 'revenuecat_rate_limited', 'RevenueCat asked to slow down; try again later');
    if (error.delayMs !== undefined) answer.headers = { 'retry-after': String(Math.ceil(error.delayMs / 1000)) };
    return answer;
  }
  if (!(error instanceof BillingError)) throw error;
  return {
    ...errorAnswer(httpStatusByBillingErrorCode[error.code], error.code, error.message),
    retryable: error.retryable,
  };
}

/**
 * `GET /v1/users/{userId}/subscription` and `POST /v1/users/{userId}/subscription/sync`. The sync
 * reads RevenueCat by the canonical user, which is always an id RevenueCat sent when the path's id
 * is linked (links are made only from RevenueCat events' ids).
 */
export const subscriptionRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/subscription',
    summary: "The user's subscription (RevenueCat or Stripe, the one that decides)",
    answers: {
      200: answerDoc('the subscription', subscriptionAnswerSchema),
      404: errorDoc('the user has no subscription', ['not_found']),
    },
    handler: async ({ user }, { db }) => {
      const subscription = await findSubscription(db, user.userId);
      if (!subscription) return errorAnswer(404, 'not_found', `user ${user.requestedId} has no subscription`);
      const { planId, status, expiresAt, store, autoRenew } = subscription;
      const answer: z.input<typeof subscriptionAnswerSchema> = {
        userId: user.requestedId,
        planId,
        status,
        expiresAt,
        store,
        autoRenew,
      };
      return { status: 200, body: answer };
    },
  }),
  // A re-read of RevenueCat, idempotent on its own: its answer is kept after it.
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/subscription/sync',
    summary: 'Re-read the subscription from RevenueCat now',
    idempotency: 'claimed',
    providerCall: true,
    answers: {
      200: answerDoc('what the re-read changed, and the subscription after it', syncAnswerSchema),
      400: errorDoc('a body with fields (the sync takes none)', ['invalid_request']),
      404: errorDoc('an id RevenueCat never sent', ['unknown_user']),
      502: errorDoc('RevenueCat unreachable or refusing', ['revenuecat_unavailable', 'revenuecat_rejected']),
      503: {
        ...errorDoc('not configured, or RevenueCat asked to slow down (Retry-After)', [
          'not_configured',
          'revenuecat_rate_limited',
        ]),
        headers: retryAfterHeader,
      },
    },
    handler: async ({ user }, { db, outbox, subscriptions }) => {
      if (!subscriptions) return errorAnswer(503, 'not_configured', 'subscription sync is not configured');
      try {
        const { result, subscription } = await syncRevenueCatSubscriptionOnDemand(
          { db, outbox, clock: systemClock, ...subscriptions },
          { userId: user.userId, requestId: randomUUID() },
        );
        const view = subscription && {
          planId: subscription.planId,
          status: subscription.status,
          expiresAt: subscription.expiresAt,
          store: subscription.store,
          autoRenew: subscription.autoRenew,
        };
        const answer: z.input<typeof syncAnswerSchema> = {
          userId: user.requestedId,
          result,
          subscription: view ?? null,
        };
        return { status: 200, body: answer };
      } catch (error) {
        return syncErrorAnswer(error);
      }
    },
  }),
];
