import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { freshStart, startAfresh } from './fresh-start';
import { type InboxEventMatch, matchingInboxEvents } from './list-inbox-events';

/**
 * Gives parked rows a fresh start: status failed → received, attempts 0, last error and any
 * wait cleared.
 * A conditional update, so requeuing a row that is not parked changes nothing. Returns the ids
 * that were reset; the caller enqueues them.
 */
export async function requeueInboxEvent(db: Kysely<DB>, inboxEventId: number): Promise<number | null> {
  const row = await db
    .updateTable('inbox_events')
    .set(freshStart)
    .where('id', '=', inboxEventId)
    .where('status', '=', 'failed')
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Requeues the parked rows among `ids` (others are left alone: a finished row is replayed, not
 * requeued; a row still at work needs nothing). The queue dashboard's retry uses this, so a retry
 * there is the same fresh start as `POST /admin/events/{id}/requeue`. Returns the ids reset.
 */
export async function requeueInboxEventIds(db: Kysely<DB>, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('inbox_events')
    .set(freshStart)
    .where('id', 'in', [...ids])
    .where('status', '=', 'failed')
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

export interface RequeueFilter extends InboxEventMatch {
  limit: number;
}

/** Requeues parked rows matching a filter, oldest first, up to `limit`. */
export function requeueInboxEvents(db: Kysely<DB>, filter: RequeueFilter): Promise<number[]> {
  return startAfresh(db, freshStart, filter.limit, (eb) =>
    eb.and([eb('status', '=', 'failed'), matchingInboxEvents(filter)(eb)]),
  );
}
