import type { Kysely, Transaction } from 'kysely';
import type { DB, StripeSubscriptionRow, SubscriptionRow, SubscriptionSource } from '../db/schema';
import { resolveUserId } from '../users/link-user-ids';

/** What `GET /v1/users/{userId}/subscription` answers. */
export interface SubscriptionView {
  userId: string;
  planId: string | null;
  status: 'active' | 'inactive';
  /** Null while active: lifetime (RevenueCat only; a Stripe subscription always has a period end). */
  expiresAt: string | null;
  /** The RevenueCat store (`app_store`, `play_store`, …), or `stripe` for a Stripe subscription. */
  store: string | null;
  autoRenew: boolean;
}

/** One subscription from either source, in the shape the answer is chosen from. */
export interface SubscriptionCandidate {
  source: SubscriptionSource;
  status: 'active' | 'inactive';
  planId: string | null;
  expiresAt: Date | null;
  store: string | null;
  autoRenew: boolean;
  updatedAt: Date;
}

/**
 * Stripe statuses that give access to the plan: `active`, `trialing`, and `past_due` (Stripe is
 * still retrying the renewal, like RevenueCat's billing-issue grace period). Every other status
 * (`canceled`, `unpaid`, `incomplete`, `incomplete_expired`, `paused`) does not.
 */
export const stripeStatusesWithAccess: ReadonlySet<string> = new Set(['active', 'trialing', 'past_due']);

/** A `subscriptions` row (RevenueCat's, or a store's read directly: its source says which). */
export function candidateFromRevenueCat(row: SubscriptionRow): SubscriptionCandidate {
  return {
    source: row.source,
    status: row.status,
    planId: row.plan_id,
    expiresAt: row.expires_at,
    store: row.store,
    autoRenew: row.auto_renew,
    updatedAt: row.updated_at,
  };
}

/**
 * A Stripe subscription as the API last reported it. Active only with a status that gives access
 * and a price the catalog maps to a plan; its expiry is the current period's end; it renews unless
 * it is set to cancel at the period end.
 */
export function candidateFromStripe(row: StripeSubscriptionRow): SubscriptionCandidate {
  const active = stripeStatusesWithAccess.has(row.status) && row.plan_id !== null;
  return {
    source: 'stripe',
    status: active ? 'active' : 'inactive',
    planId: active ? row.plan_id : null,
    expiresAt: row.current_period_end,
    store: 'stripe',
    autoRenew: active && !row.cancel_at_period_end,
    updatedAt: row.updated_at,
  };
}

/**
 * The subscription a user has across sources: an active one before any inactive one; among
 * active ones the one running latest (no expiry = lifetime first); otherwise (or on a tie) the
 * most recently changed. Undefined when there is none.
 */
export function chooseSubscription(candidates: readonly SubscriptionCandidate[]): SubscriptionCandidate | undefined {
  const ranked = [...candidates].sort((a, b) => {
    if (a.status !== b.status) return a.status === 'active' ? -1 : 1;
    const expiryA = a.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
    const expiryB = b.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
    if (a.status === 'active' && expiryA !== expiryB) return expiryB > expiryA ? 1 : -1;
    return b.updatedAt.getTime() - a.updatedAt.getTime();
  });
  return ranked[0];
}

/** Every subscription row of one (canonical) user, from both sources, as candidates. */
export async function subscriptionCandidatesOf(
  db: Kysely<DB> | Transaction<DB>,
  canonicalUserId: string,
): Promise<SubscriptionCandidate[]> {
  const [revenueCat, stripe] = await Promise.all([
    db.selectFrom('subscriptions').selectAll().where('user_id', '=', canonicalUserId).execute(),
    db.selectFrom('stripe_subscriptions').selectAll().where('user_id', '=', canonicalUserId).execute(),
  ]);
  return [...revenueCat.map(candidateFromRevenueCat), ...stripe.map(candidateFromStripe)];
}

export function toSubscriptionView(userId: string, candidate: SubscriptionCandidate): SubscriptionView {
  return {
    userId,
    planId: candidate.planId,
    status: candidate.status,
    expiresAt: candidate.expiresAt?.toISOString() ?? null,
    store: candidate.store,
    autoRenew: candidate.autoRenew,
  };
}

/**
 * A user's subscription by any linked id, combining RevenueCat (`subscriptions`) and Stripe
 * (`stripe_subscriptions`) by `chooseSubscription`. The answer keeps the requested id. Undefined
 * when the user never had one in either source.
 */
export async function findSubscription(db: Kysely<DB>, userId: string): Promise<SubscriptionView | undefined> {
  const canonical = await resolveUserId(db, userId);
  const best = chooseSubscription(await subscriptionCandidatesOf(db, canonical));
  return best ? toSubscriptionView(userId, best) : undefined;
}
