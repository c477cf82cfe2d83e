import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { DEFAULT_PRUNE_BATCH_SIZE, pruneInBatches } from './prune-in-batches';

export interface PruneIdempotencyKeysOptions {
  /** Keys created more than this many hours ago are deleted (IDEMPOTENCY_KEY_TTL_HOURS). */
  ttlHours: number;
  /** Rows per statement (each batch is one short transaction). */
  batchSize?: number;
}

/**
 * Retention of the product API's idempotency keys: deletes keys created before the TTL, oldest
 * first, in batches; a retry with a pruned key runs as a new request. Whatever their state: a
 * key that old has no request still running it. Safe on several replicas (SKIP LOCKED). Returns
 * how many keys were deleted.
 */
export async function pruneIdempotencyKeys(db: Kysely<DB>, options: PruneIdempotencyKeysOptions): Promise<number> {
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  const cutoff = sql<Date>`now() - make_interval(hours => ${options.ttlHours})`;
  return pruneInBatches(batchSize, async () => {
    const due = db
      .selectFrom('idempotency_keys')
      .select('id')
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(batchSize)
      .forUpdate()
      .skipLocked();
    return (await db.deleteFrom('idempotency_keys').where('id', 'in', due).returning('id').execute()).length;
  });
}
