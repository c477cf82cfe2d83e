/**
 * The Postgres advisory lock keys the plumbing takes. The application keeps a registry of its own
 * (billing-core's db/advisory-locks.ts), whose test proves every key of both distinct and that no
 * other source file spells one out. Never reuse a retired number: during a rolling deploy old and
 * new code run side by side.
 */

/**
 * Transaction lock of `migrate`, taken by each migration's transaction: one process applies a
 * given migration at a time.
 */
export const MIGRATION_LOCK_KEY = 7_411_020;
