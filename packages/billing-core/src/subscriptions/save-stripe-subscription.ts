import { sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { StripeSubscriptionRow } from '../db/schema';
import { voidFutureInstallments } from '../installments/void-future-installments';
import { ensureWallet } from '../ledger/ensure-wallet';
import {
  type StripeJson,
  secondsToDate,
  stripeIdOf,
  stripeNumberAt,
  subscriptionPeriodEndOf,
  subscriptionPriceIdsOf,
} from '../provider-data/stripe-objects';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { announceSubscriptionChange, readAnnouncedSubscription } from './announce-subscription-change';

/** Stripe statuses after which the subscription grants nothing more (both are final at Stripe). */
const endedStatuses = new Set(['canceled', 'incomplete_expired']);

/** Whether a Stripe subscription status is final: nothing not yet due is owed any more. */
export function isEndedStripeStatus(status: string): boolean {
  return endedStatuses.has(status);
}

/**
 * Writes a subscription exactly as the Stripe API reported it (never from an event payload, so
 * events applied in any order converge on the API's state). Ending a subscription voids its
 * installments that are not due yet, and writes a `subscription.updated` app webhook message when
 * the subscription the app sees changed. Idempotent; joins the caller's transaction.
 *
 * Two fences against a stale read (events are prepared concurrently, outside any transaction):
 * a read started before the one already saved (`provider_read_at`) changes nothing, and a
 * subscription saved as ended (`canceled`, `incomplete_expired`: final at Stripe) is never
 * brought back by any read. Such a read returns `stale: true` with the row as it stays.
 */
export async function saveStripeSubscription(
  uow: UnitOfWork,
  input: {
    subscription: StripeJson;
    userId: string;
    catalog: Catalog;
    /** When the API read of `subscription` was started (before the request). */
    readAt: Date;
  },
): Promise<{ row: StripeSubscriptionRow; voidedInstallments: number; stale: boolean }> {
  const { trx } = uow;
  const { subscription, userId, catalog, readAt } = input;
  const subscriptionId = stripeIdOf(subscription.id);
  if (subscriptionId === null) throw new Error('subscription without id');
  const match = subscriptionPriceIdsOf(subscription)
    .map((priceId) => catalog.findPlanByStripePrice(priceId))
    .find((found) => found !== undefined);
  const status = typeof subscription.status === 'string' ? subscription.status : 'unknown';
  await ensureWallet(uow, userId);
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
    provider_read_at: readAt,
  };
  const announced = await readAnnouncedSubscription(trx, userId);
  const ended = [...endedStatuses];
  const row = await trx
    .insertInto('stripe_subscriptions')
    .values({ subscription_id: subscriptionId, ...values })
    .onConflict((oc) =>
      oc
        .column('subscription_id')
        .doUpdateSet({ ...values, updated_at: sql`now()` })
        .where((eb) =>
          eb.and([
            eb.or([
              eb('stripe_subscriptions.provider_read_at', 'is', null),
              eb('stripe_subscriptions.provider_read_at', '<=', eb.ref('excluded.provider_read_at')),
            ]),
            eb.or([eb('stripe_subscriptions.status', 'not in', ended), eb('excluded.status', 'in', ended)]),
          ]),
        ),
    )
    .returningAll()
    .executeTakeFirst();
  if (!row) {
    const current = await trx
      .selectFrom('stripe_subscriptions')
      .selectAll()
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirstOrThrow();
    return { row: current, voidedInstallments: 0, stale: true };
  }
  const voidedInstallments = endedStatuses.has(status) ? await voidFutureInstallments(trx, subscriptionId) : 0;
  await announceSubscriptionChange(uow, userId, announced);
  return { row, voidedInstallments, stale: false };
}
