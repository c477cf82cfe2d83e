import { type RawBuilder, sql } from 'kysely';

/**
 * The one order in which a transaction takes several users' advisory locks: ascending lock key,
 * `hashtext(user id)` as a signed int4 (two ids with one key share the lock, so the key alone
 * orders the locks). Every statement that takes more than one user lock takes them through this
 * fragment (the coalesced batch's read, lockUsers), and lockUsers never *waits* for a key below
 * one its transaction already holds (it tries it instead), so no two transactions can wait for
 * each other's user locks in a cycle (docs/engine.md#the-order-of-user-locks).
 *
 * `userIds` is a relation with a `user_id` column (nulls skipped); `namespace` the lock's first
 * half (USER_LOCK_NAMESPACE, passed in so precompiled statements can make it a slot).
 */
export function userLocksInKeyOrder(namespace: unknown, userIds: RawBuilder<unknown>): RawBuilder<unknown> {
  // guard: user-locks-key-order
  // guard: batch-user-locks
  return sql`SELECT pg_advisory_xact_lock(${namespace}, keys.key)::text AS locked
    FROM (SELECT DISTINCT hashtext(users.user_id) AS key FROM (${userIds}) AS users
           WHERE users.user_id IS NOT NULL ORDER BY 1) AS keys`;
}
