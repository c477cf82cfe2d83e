import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import type { IdempotencyClaim } from './idempotency-types';

/**
 * Frees the lease of an attempt that ended without a final answer (a 5xx: Stripe timed out, the
 * database failed): the key keeps its recovery point and the next retry resumes from it at once,
 * without waiting for the lease to expire. Fenced on the lock token: a no-op when the attempt no
 * longer holds the key or finished it. Returns whether the lease was released.
 */
export async function releaseIdempotencyKey(db: Kysely<DB>, claim: IdempotencyClaim): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_at: null, lock_token: null, updated_at: sql`now()` })
    .where('id', '=', claim.id)
    .where('lock_token', '=', claim.lockToken)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
