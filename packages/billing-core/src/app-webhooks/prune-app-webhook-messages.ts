import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

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
  const batchSize = options.batchSize ?? 1_000;
  const cutoff = sql`now() - make_interval(days => ${options.retentionDays})`;
  const prunable = options.undelivered
    ? sql`((status = 'delivered' AND delivered_at < ${cutoff}) OR (status <> 'delivered' AND created_at < ${cutoff}))`
    : sql`(status = 'delivered' AND delivered_at < ${cutoff})`;
  let total = 0;
  for (;;) {
    const deleted = await sql`
      DELETE FROM app_webhook_messages
       WHERE id IN (SELECT id FROM app_webhook_messages WHERE ${prunable} LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`.execute(
      db,
    );
    const count = Number(deleted.numAffectedRows ?? 0);
    total += count;
    if (count < batchSize) return total;
  }
}
