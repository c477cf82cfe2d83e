/**
 * Every lease name (db/run-with-lease.ts), in one registry, so that no two uses share one by
 * accident. Never reuse a retired name: during a rolling deploy old and new code run side by side.
 */

/** Scheduled Stripe reconciliations (`reconcileStripeExclusively`): one pass at a time across replicas. */
export const RECONCILE_STRIPE_LEASE = 'reconcile-stripe';

/** The daily pass over Google Play's Voided Purchases API (`runVoidedPurchasesPass`): one at a time across replicas. */
export const GOOGLE_PLAY_VOIDED_PASS_LEASE = 'google-play-voided-pass';

/** Scheduled Apple reconciliations (`reconcileAppleExclusively`): one pass at a time across replicas. */
export const RECONCILE_APPLE_LEASE = 'reconcile-apple';
