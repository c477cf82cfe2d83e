import { sql, type Transaction } from 'kysely';
import { USER_LOCK_NAMESPACE } from '../db/advisory-locks';
import type { DB } from '../db/schema';

/**
 * Takes the per-user advisory lock the inbox engine takes for an event's user, until the
 * transaction ends. Writers of a user's state that are not keyed by the event's own user (a
 * linked canonical user, an on-demand sync) take it so they serialise with the events.
 */
export async function lockUser(trx: Transaction<DB>, userId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(${userId}))`.execute(trx);
}

/** Locks several users in a fixed order (sorted), so two writers never wait on each other in a cycle. */
export async function lockUsers(trx: Transaction<DB>, userIds: Iterable<string>): Promise<void> {
  for (const userId of [...new Set(userIds)].sort()) await lockUser(trx, userId);
}
