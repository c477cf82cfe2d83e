import { sql, type Transaction } from 'kysely';
import { STUDIO_LOCK_NAMESPACE } from './advisory-locks';
import type { DB } from './schema';

/**
 * Takes the per-user studio lock until the transaction ends. It serialises the creation of one
 * user's studio requests (the free allowance count, the insert and the debit), so two requests
 * of a user never decide on the same count or balance. Waits while another transaction holds it.
 */
export async function lockStudioUser(trx: Transaction<DB>, userId: string): Promise<void> {
  await sql`SELECT ${studioUserLock(userId)}`.execute(trx);
}

/** The lock of lockStudioUser as an SQL expression, for a statement that takes it along with other work. */
export function studioUserLock(userId: string) {
  return sql`pg_advisory_xact_lock(${STUDIO_LOCK_NAMESPACE}, hashtext(${userId}))`;
}
