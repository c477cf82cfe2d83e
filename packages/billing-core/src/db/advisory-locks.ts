/**
 * Every Postgres advisory lock key of the domain, in one registry, so that no two uses share a key
 * by accident (advisory-locks.test.ts proves these keys and the plumbing's, MIGRATION_LOCK_KEY of
 * @tally/platform/db, distinct, and that no other source file spells one out). Two forms exist:
 * - a NAMESPACE is the first half of a per-entity lock, `pg_advisory_xact_lock(namespace,
 *   hashtext(id))` (two int4 halves), held until the transaction ends;
 * - a KEY is a whole singleton lock, `pg_advisory_xact_lock(key)` (one bigint).
 * Postgres keeps the two forms apart, but every number here is distinct across both anyway, so a
 * row of pg_locks names one use. Never reuse a retired number: during a rolling deploy old and
 * new code run side by side.
 */

/**
 * Per user: the inbox engine's apply transaction (events of one user apply one at a time) and
 * every other writer of a user's state (`lockUser`).
 */
export const USER_LOCK_NAMESPACE = 7_411_001;

/** Per user: the creation of one user's AI Studio requests (`lockStudioUser`). */
// guard: studio-lock-namespace
export const STUDIO_LOCK_NAMESPACE = 7_411_005;

/**
 * Per (user, Idempotency-Key): the attempt of a one-transaction request that runs it (a try-lock:
 * a concurrent attempt of the same key answers 409 instead of waiting; takeIdempotencyKeyInTransaction).
 */
export const IDEMPOTENCY_KEY_LOCK_NAMESPACE = 7_411_006;

/**
 * Per Google Play order: a purchase's credit and its void (notification or daily pass) decide one
 * after the other, so a void committed while the credit ran is never missed (a try-lock: the one
 * that finds it held retries later; docs/stores-google-play.md).
 */
export const GOOGLE_PLAY_ORDER_LOCK_NAMESPACE = 7_411_061;

// Retired: 7_411_030 (a session try-lock of scheduled Stripe reconciliations, replaced by the
// lease RECONCILE_STRIPE_LEASE in lease-names.ts; session locks do not survive PgBouncer).
// Every lock here is transaction-scoped: the processes may connect through a transaction pooler.
