import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { DEFAULT_PRUNE_BATCH_SIZE, pruneInBatches } from './prune-in-batches';

export interface PruneRawBodiesOptions {
  /** Bodies of events finished more than this many days ago are removed. */
  retentionDays: number;
  /** Rows per statement (each batch is one short transaction). */
  batchSize?: number;
}

/**
 * Rows whose raw body later events still read, kept whatever their age: a RevenueCat token-pack
 * refund finds the purchase it reverses through the purchase event's body (transaction_id), and
 * a refund may come long after the purchase.
 */
const keptBodies = [{ provider: 'revenuecat', type: 'NON_RENEWING_PURCHASE' }] as const;

/**
 * Retention: removes the raw bodies of finished (processed or ignored) inbox events whose
 * processed_at is older than the retention, oldest first, in batches. The row stays with every id,
 * its status and outcome (raw_body NULL, raw_body_pruned_at set); received, processing and parked
 * (failed) rows are never touched, nor is the ledger. A pruned event cannot be replayed.
 * Safe on several replicas (SKIP LOCKED). Returns how many bodies were pruned.
 */
export async function pruneInboxRawBodies(db: Kysely<DB>, options: PruneRawBodiesOptions): Promise<number> {
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  const cutoff = sql<Date>`now() - make_interval(days => ${options.retentionDays})`;
  return pruneInBatches(batchSize, async () => {
    const due = db
      .selectFrom('inbox_events')
      .select('id')
      .where('raw_body_pruned_at', 'is', null)
      .where('status', 'in', ['processed', 'ignored'])
      .where('processed_at', '<', cutoff)
      .where((eb) =>
        eb.not(
          eb.or(keptBodies.map((kept) => eb.and([eb('provider', '=', kept.provider), eb('type', '=', kept.type)]))),
        ),
      )
      .orderBy('processed_at')
      .orderBy('id')
      .limit(batchSize)
      .forUpdate()
      .skipLocked();
    const rows = await db
      .updateTable('inbox_events')
      .set({ raw_body: null, raw_body_pruned_at: sql`now()`, updated_at: sql`now()` })
      .where('id', 'in', due)
      // Re-checked on the locked row: a replay may have reset it meanwhile.
      .where('status', 'in', ['processed', 'ignored'])
      .where('raw_body_pruned_at', 'is', null)
      .returning('id')
      .execute();
    return rows.length;
  });
}
