import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { DB } from '../db/schema';

/** What requeue and replay reset: the row runs again as if new, with its history kept. */
export const freshStart = {
  status: 'received',
  attempts: 0,
  last_error: null,
  next_attempt_at: null,
  waiting_since: null,
  enqueued_at: sql<Date>`now()`,
  updated_at: sql<Date>`now()`,
} as const;

/** A replay's fresh start: the replay counted and its time kept. */
export const replayStart = { ...freshStart, replays: sql<number>`replays + 1`, replayed_at: sql<Date>`now()` } as const;

/**
 * Gives `start` to the rows `where` selects, oldest first, at most `limit`; rows another
 * transaction holds are skipped, not waited for. Returns the ids reset, ascending; the caller
 * enqueues them.
 */
export async function startAfresh(
  db: Kysely<DB>,
  start: typeof freshStart | typeof replayStart,
  limit: number,
  where: (eb: ExpressionBuilder<DB, 'inbox_events'>) => Expression<SqlBool>,
): Promise<number[]> {
  const selection = db
    .selectFrom('inbox_events')
    .select('id')
    .where(where)
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked();
  const rows = await db.updateTable('inbox_events').set(start).where('id', 'in', selection).returning('id').execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}
