import { randomUUID } from 'node:crypto';
import {
  type AppWebhookOutbox,
  BillingError,
  type Catalog,
  type DB,
  type EventPolicy,
  findSubscription,
  RetryLaterError,
  type RevenueCatApi,
  syncRevenueCatSubscriptionOnDemand,
  systemClock,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { type Response, Router } from 'express';
import type { Kysely } from 'kysely';
import { httpStatusByBillingErrorCode } from '../../http/billing-error-statuses';
import { markAnswerRetryable } from '../../http/idempotency';
import { userScopeOf } from '../../http/user-scope';

export interface SubscriptionRoutesDeps {
  db: Kysely<DB>;
  /** The sync's subscription.updated, handed off after the commit. */
  outbox: AppWebhookOutbox;
  subscriptions?: { catalog: Catalog; policy: EventPolicy; revenueCat: RevenueCatApi | undefined } | undefined;
}

/** Answers a sync failure: unknown user 404, not configured 503, RevenueCat 429 → 503 + Retry-After, unavailable or rejected 502. */
function sendSyncError(res: Response, error: unknown): void {
  if (error instanceof RetryLaterError) {
    if (error.delayMs !== undefined) res.setHeader('retry-after', String(Math.ceil(error.delayMs / 1000)));
    sendError(res, 503, 'revenuecat_rate_limited', 'RevenueCat asked to slow down; try again later');
    return;
  }
  if (!(error instanceof BillingError)) throw error;
  if (error.retryable) markAnswerRetryable(res);
  sendError(res, httpStatusByBillingErrorCode[error.code], error.code, error.message);
}

/**
 * `GET /v1/users/{userId}/subscription` and `POST /v1/users/{userId}/subscription/sync`, mounted by
 * createUserRoutes. The sync reads RevenueCat by the canonical user, which is always an id RevenueCat
 * sent when the path's id is linked (links are made only from RevenueCat events' ids).
 */
export function createSubscriptionRoutes(deps: SubscriptionRoutesDeps): Router {
  const router = Router();

  router.get('/subscription', async (_req, res) => {
    const { userId, requestedId } = userScopeOf(res);
    const subscription = await findSubscription(deps.db, userId);
    if (!subscription) return sendError(res, 404, 'not_found', `user ${requestedId} has no subscription`);
    const { planId, status, expiresAt, store, autoRenew } = subscription;
    res.json({ userId: requestedId, planId, status, expiresAt, store, autoRenew });
  });

  router.post('/subscription/sync', async (_req, res) => {
    const { userId, requestedId } = userScopeOf(res);
    const settings = deps.subscriptions;
    if (!settings) return sendError(res, 503, 'not_configured', 'subscription sync is not configured');
    try {
      const { result, subscription } = await syncRevenueCatSubscriptionOnDemand(
        { db: deps.db, outbox: deps.outbox, clock: systemClock, ...settings },
        { userId, requestId: randomUUID() },
      );
      res.json({
        userId: requestedId,
        result,
        subscription: subscription
          ? {
              planId: subscription.planId,
              status: subscription.status,
              expiresAt: subscription.expiresAt,
              store: subscription.store,
              autoRenew: subscription.autoRenew,
            }
          : null,
      });
    } catch (error) {
      sendSyncError(res, error);
    }
  });

  return router;
}
