import { sql, type Transaction } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { DB, StripeSubscriptionRow } from '../db/schema';
import { voidFutureInstallments } from '../installments/void-future-installments';
import { ensureWallet } from '../ledger/ensure-wallet';
import {
  type StripeJson,
  secondsToDate,
  stripeIdOf,
  stripeNumberAt,
  subscriptionPeriodEndOf,
  subscriptionPriceIdsOf,
} from '../providers/stripe/stripe-objects';

/** Stripe statuses after which the subscription grants nothing more (both are final at Stripe). */
const endedStatuses = new Set(['canceled', 'incomplete_expired']);

/** Whether a Stripe subscription status is final: nothing not yet due is owed any more. */
export function isEndedStripeStatus(status: string): boolean {
  return endedStatuses.has(status);
}

/**
 * Writes a subscription exactly as the Stripe API reported it (never from an event payload, so
 * events applied in any order converge on the API's state). Ending a subscription voids its
 * installments that are not due yet. Idempotent; joins the caller's transaction.
 */
export async function saveStripeSubscription(
  trx: Transaction<DB>,
  input: { subscription: StripeJson; userId: string; catalog: Catalog },
): Promise<{ row: StripeSubscriptionRow; voidedInstallments: number }> {
  const { subscription, userId, catalog } = input;
  const subscriptionId = stripeIdOf(subscription.id);
  if (subscriptionId === null) throw new Error('subscription without id');
  const match = subscriptionPriceIdsOf(subscription)
    .map((priceId) => catalog.findPlanByStripePrice(priceId))
    .find((found) => found !== undefined);
  const status = typeof subscription.status === 'string' ? subscription.status : 'unknown';
  await ensureWallet(trx, userId);
  const values = {
    user_id: userId,
    customer_id: stripeIdOf(subscription.customer),
    plan_id: match?.plan.id ?? null,
    price_id: match?.price.priceId ?? subscriptionPriceIdsOf(subscription)[0] ?? null,
    billing_interval: match?.price.interval ?? null,
    status,
    current_period_end: subscriptionPeriodEndOf(subscription),
    cancel_at_period_end: subscription.cancel_at_period_end === true,
    canceled_at: secondsToDate(stripeNumberAt(subscription, 'canceled_at')),
    ended_at: secondsToDate(stripeNumberAt(subscription, 'ended_at')),
  };
  const row = await trx
    .insertInto('stripe_subscriptions')
    .values({ subscription_id: subscriptionId, ...values })
    .onConflict((oc) => oc.column('subscription_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
  const voidedInstallments = endedStatuses.has(status) ? await voidFutureInstallments(trx, subscriptionId) : 0;
  return { row, voidedInstallments };
}
