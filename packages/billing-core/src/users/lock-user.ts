import { sql, type Transaction } from 'kysely';
import { USER_LOCK_NAMESPACE } from '../db/advisory-locks';
import type { DB } from '../db/schema';
import { userLocksInKeyOrder } from '../db/user-lock-order';
import { RetryLaterError } from '../errors';

/**
 * A user lock this transaction needs is below the highest user lock it already holds and another
 * transaction holds it: waiting for it could close a cycle, so the transaction must roll back
 * and run again (the inbox engine defers the event: a "retry later", no attempt spent).
 */
export class UserLockOrderError extends RetryLaterError {
  constructor(readonly userIds: readonly string[]) {
    super(`a user lock out of order is held by another transaction (${userIds.join(', ')}); retrying`);
  }
}

/**
 * Takes the per-user advisory lock the inbox engine takes for an event's user, until the
 * transaction ends. Writers of a user's state that are not keyed by the event's own user (a
 * linked canonical user, an on-demand sync) take it so they serialise with the events. In a
 * transaction that holds other user locks already, it keeps lockUsers' order (and may throw
 * UserLockOrderError).
 */
export async function lockUser(trx: Transaction<DB>, userId: string): Promise<void> {
  await lockUsers(trx, [userId]);
}

/**
 * Locks several users in the one order (userLocksInKeyOrder, ascending key), in one statement,
 * so two writers never wait on each other in a cycle, also when the transaction holds user locks
 * already (the engine's lock of the event's user, a batch's): a key above every key it holds is
 * waited for, in order; one below is only *tried*, and when another transaction holds it this
 * throws UserLockOrderError (retryable: the caller's transaction rolls back and runs again).
 * Idempotent: a lock the transaction holds is taken again at once.
 */
export async function lockUsers(trx: Transaction<DB>, userIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return;
  // pg_locks shows a two-int4 advisory lock as (classid, objid, objsubid 2), objid unsigned.
  // guard: user-lock-below-held
  // guard: user-lock-namespace-registry
  const { rows } = await sql<{ in_order: boolean }>`
    WITH held AS MATERIALIZED (
      SELECT max(CASE WHEN objid::bigint > 2147483647 THEN objid::bigint - 4294967296 ELSE objid::bigint END) AS top
        FROM pg_locks
       WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
         AND classid = ${USER_LOCK_NAMESPACE}::int::oid AND objsubid = 2),
    wanted AS MATERIALIZED (
      SELECT wanted.user_id, (hashtext(wanted.user_id) <= (SELECT top FROM held)) IS TRUE AS below
        FROM unnest(${ids}::text[]) AS wanted(user_id)),
    tried AS MATERIALIZED (
      SELECT bool_and(pg_try_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(user_id))) AS got
        FROM wanted WHERE below),
    waited AS MATERIALIZED (${userLocksInKeyOrder(
      USER_LOCK_NAMESPACE,
      sql`SELECT user_id FROM wanted WHERE NOT below AND (SELECT got FROM tried) IS NOT FALSE`,
    )})
    SELECT (SELECT got FROM tried) IS NOT FALSE AS in_order, (SELECT count(*) FROM waited) AS waited`.execute(trx);
  if (rows[0]?.in_order !== true) throw new UserLockOrderError(ids);
}
