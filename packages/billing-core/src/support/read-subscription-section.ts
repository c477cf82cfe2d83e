import type { Transaction } from 'kysely';
import { countRows } from '../db/count-rows';
import type { DB } from '../db/schema';
import { candidateFromRevenueCat, candidateFromStripe, chooseSubscription } from '../subscriptions/find-subscription';
import type { SupportSubject, SupportSubscription } from './user-support-view';

/**
 * The subscription from both sources: the RevenueCat row (`subscriptions`), every Stripe
 * subscription (`stripe_subscriptions`), the combined answer `GET /v1/users/{id}/subscription`
 * gives (`current`), and the history (newest first, at most `historyLimit`). Null when neither
 * source has a row.
 */
export async function readSubscriptionSection(
  trx: Transaction<DB>,
  { userId, userIds }: SupportSubject,
  historyLimit: number,
): Promise<SupportSubscription | null> {
  const revenueCatRows = await trx.selectFrom('subscriptions').selectAll().where('user_id', '=', userId).execute();
  const stripeRows = await trx
    .selectFrom('stripe_subscriptions')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('created_at', 'desc')
    .execute();
  const history = await trx
    .selectFrom('subscription_history')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(historyLimit)
    .execute();
  const historyTotal = await countRows(trx.selectFrom('subscription_history').where('user_id', '=', userId));
  if (revenueCatRows.length === 0 && stripeRows.length === 0 && history.length === 0) return null;

  // The answer of GET /v1/users/{id}/subscription reads the canonical user's rows only.
  const current = chooseSubscription([
    ...revenueCatRows.map(candidateFromRevenueCat),
    ...stripeRows.filter((row) => row.user_id === userId).map(candidateFromStripe),
  ]);
  const revenueCat = revenueCatRows.find((row) => row.source === 'revenuecat');
  return {
    current: current
      ? {
          source: current.source,
          planId: current.planId,
          status: current.status,
          expiresAt: current.expiresAt,
          store: current.store,
          autoRenew: current.autoRenew,
        }
      : null,
    revenuecat: revenueCat
      ? {
          status: revenueCat.status,
          planId: revenueCat.plan_id,
          productId: revenueCat.product_id,
          expiresAt: revenueCat.expires_at,
          store: revenueCat.store,
          autoRenew: revenueCat.auto_renew,
          billingIssueDetectedAt: revenueCat.billing_issue_detected_at,
          providerReadAt: revenueCat.provider_read_at,
          updatedAt: revenueCat.updated_at,
        }
      : null,
    stripe: stripeRows.map((row) => ({
      subscriptionId: row.subscription_id,
      customerId: row.customer_id,
      planId: row.plan_id,
      priceId: row.price_id,
      interval: row.billing_interval,
      status: row.status,
      currentPeriodEnd: row.current_period_end,
      cancelAtPeriodEnd: row.cancel_at_period_end,
      canceledAt: row.canceled_at,
      endedAt: row.ended_at,
      updatedAt: row.updated_at,
    })),
    history: history.map((row) => ({
      id: row.id,
      source: row.source,
      change: row.change,
      fromStatus: row.from_status,
      toStatus: row.to_status,
      fromPlanId: row.from_plan_id,
      toPlanId: row.to_plan_id,
      fromExpiresAt: row.from_expires_at,
      toExpiresAt: row.to_expires_at,
      toStore: row.to_store,
      toAutoRenew: row.to_auto_renew,
      cause: row.cause,
      inboxEventId: row.inbox_event_id,
      requestId: row.request_id,
      createdAt: row.created_at,
    })),
    historyTotal,
  };
}
