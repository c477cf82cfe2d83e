import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { DEFAULT_PRUNE_BATCH_SIZE, pruneInBatches } from '../retention/prune-in-batches';

/**
 * Deletes delivered messages delivered more than retentionDays ago, in batches (database clock).
 * With `undelivered: true` (no APP_WEBHOOK_URL: nothing will ever deliver them) it also deletes
 * pending and failed messages written that long ago. Failed messages are otherwise kept for a
 * redeliver. Returns how many rows it deleted. Safe on any number of replicas.
 */
export async function pruneAppWebhookMessages(
  db: Kysely<DB>,
  options: { retentionDays: number; undelivered?: boolean; batchSize?: number },
): Promise<number> {
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  const cutoff = sql`now() - make_interval(days => ${options.retentionDays})`;
  const prunable = options.undelivered
    ? sql`((status = 'delivered' AND delivered_at < ${cutoff}) OR (status <> 'delivered' AND created_at < ${cutoff}))`
    : sql`(status = 'delivered' AND delivered_at < ${cutoff})`;
  return pruneInBatches(batchSize, async () => {
    const deleted = await sql`
      DELETE FROM app_webhook_messages
       WHERE id IN (SELECT id FROM app_webhook_messages WHERE ${prunable} LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`.execute(
      db,
    );
    return Number(deleted.numAffectedRows ?? 0);
  });
}
