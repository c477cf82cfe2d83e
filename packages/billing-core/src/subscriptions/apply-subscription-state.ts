import { sql } from 'kysely';
import type { SubscriptionChange, SubscriptionRow, SubscriptionSource } from '../db/schema';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { announceSubscriptionChange, readAnnouncedSubscription } from './announce-subscription-change';
import type { DesiredSubscription } from './desired-revenuecat-subscription';

/** Expiries closer than this are the same period (stores round and re-stamp them). */
export const SAME_EXPIRY_TOLERANCE_MS = 5 * 60_000;

export type SubscriptionCause =
  | { kind: 'inbox_event'; inboxEventId: number }
  | { kind: 'on_demand_sync'; requestId: string };

export type ApplySubscriptionResult =
  | { kind: 'changed'; change: SubscriptionChange; subscription: SubscriptionRow }
  /** Same plan, status, product, store, auto-renew, billing issue and expiry within 5 minutes: nothing written. */
  | { kind: 'already_synchronized'; subscription: SubscriptionRow }
  /** No subscription on record and none to activate: nothing written. */
  | { kind: 'no_subscription' }
  /** A newer read was already applied; this older one is dropped. */
  | { kind: 'stale_read'; subscription: SubscriptionRow };

function sameExpiry(a: Date | null, b: Date | null): boolean {
  if (a === null || b === null) return a === b;
  return Math.abs(a.getTime() - b.getTime()) <= SAME_EXPIRY_TOLERANCE_MS;
}

function isSynchronized(current: SubscriptionRow, desired: DesiredSubscription): boolean {
  if (desired.status === 'inactive') return current.status === 'inactive';
  return (
    current.status === 'active' &&
    current.plan_id === desired.planId &&
    current.product_id === desired.productId &&
    current.store === desired.store &&
    current.auto_renew === desired.autoRenew &&
    (current.billing_issue_detected_at === null) === (desired.billingIssueDetectedAt === null) &&
    sameExpiry(current.expires_at, desired.expiresAt)
  );
}

function changeOf(current: SubscriptionRow | undefined, desired: DesiredSubscription): SubscriptionChange {
  if (desired.status === 'inactive') return 'deactivated';
  if (!current || current.status === 'inactive') return 'activated';
  if (current.plan_id !== desired.planId) return 'plan_changed';
  const before = current.expires_at?.getTime() ?? Number.POSITIVE_INFINITY;
  const after = desired.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
  return after - before > SAME_EXPIRY_TOLERANCE_MS ? 'renewed' : 'updated';
}

/**
 * Brings a user's subscription from one source to the desired state, inside the caller's
 * transaction (which must hold the user's lock: lockUser). Writes nothing when already
 * synchronized or when the read is older than the one applied last; otherwise upserts the
 * subscription row and appends one history row saying what changed, from what to what, and
 * what caused it, and a `subscription.updated` app webhook message when the subscription the app
 * sees (both sources combined) changed.
 */
export async function applySubscriptionState(
  uow: UnitOfWork,
  input: {
    userId: string;
    source: SubscriptionSource;
    desired: DesiredSubscription;
    /** The provider's time of the read (RevenueCat request_date_ms). */
    readAt: Date;
    cause: SubscriptionCause;
  },
): Promise<ApplySubscriptionResult> {
  const { trx } = uow;
  const { userId, source, desired, readAt, cause } = input;
  const current = await trx
    .selectFrom('subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('source', '=', source)
    .forUpdate()
    .executeTakeFirst();
  if (!current && desired.status === 'inactive') return { kind: 'no_subscription' };
  if (current?.provider_read_at && readAt.getTime() < current.provider_read_at.getTime()) {
    return { kind: 'stale_read', subscription: current };
  }
  if (current && isSynchronized(current, desired)) return { kind: 'already_synchronized', subscription: current };

  const change = changeOf(current, desired);
  const announced = await readAnnouncedSubscription(trx, userId);
  const next =
    desired.status === 'active'
      ? {
          status: 'active' as const,
          plan_id: desired.planId,
          product_id: desired.productId,
          expires_at: desired.expiresAt,
          store: desired.store,
          auto_renew: desired.autoRenew,
          billing_issue_detected_at: desired.billingIssueDetectedAt,
        }
      : {
          // Deactivated: the plan goes; the last product, expiry and store stay for support.
          status: 'inactive' as const,
          plan_id: null,
          product_id: current?.product_id ?? null,
          expires_at: current?.expires_at ?? null,
          store: current?.store ?? null,
          auto_renew: false,
          billing_issue_detected_at: null,
        };
  const subscription = await trx
    .insertInto('subscriptions')
    .values({ user_id: userId, source, ...next, provider_read_at: readAt })
    .onConflict((oc) =>
      oc.columns(['user_id', 'source']).doUpdateSet({ ...next, provider_read_at: readAt, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('subscription_history')
    .values({
      user_id: userId,
      source,
      change,
      from_status: current?.status ?? null,
      to_status: next.status,
      from_plan_id: current?.plan_id ?? null,
      to_plan_id: next.plan_id,
      from_product_id: current?.product_id ?? null,
      to_product_id: next.product_id,
      from_expires_at: current?.expires_at ?? null,
      to_expires_at: next.expires_at,
      from_store: current?.store ?? null,
      to_store: next.store,
      from_auto_renew: current?.auto_renew ?? null,
      to_auto_renew: next.auto_renew,
      cause: cause.kind,
      inbox_event_id: cause.kind === 'inbox_event' ? cause.inboxEventId : null,
      request_id: cause.kind === 'on_demand_sync' ? cause.requestId : null,
      provider_read_at: readAt,
    })
    .execute();
  await announceSubscriptionChange(uow, userId, announced);
  return { kind: 'changed', change, subscription };
}
