import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Gives parked (`failed`) email outbox rows among `ids` a fresh start: status pending, attempts 0,
 * last error and schedule cleared, enqueued_at now (the caller hands the job off; if that is lost
 * the relay enqueues the row after its stale window). A conditional update, so a row that is
 * pending, processing, sent or skipped is left alone: an email that went out is never sent again
 * by a requeue. Touches only email_outbox, never a payment or the ledger. Idempotent; returns the
 * ids reset, ascending.
 */
export async function requeueOutboxEmails(db: Kysely<DB>, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('email_outbox')
    .set({
      status: 'pending',
      attempts: 0,
      last_error: null,
      next_attempt_at: null,
      enqueued_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', 'in', [...ids])
    .where('status', '=', 'failed')
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}
