import type { Kysely } from 'kysely';
import type { DB, Provider } from '../db/schema';
import { freshStart } from './fresh-start';

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

export interface RequeueFilter {
  provider?: Provider | undefined;
  type?: string | undefined;
  userId?: string | undefined;
  outcomeCode?: string | undefined;
  limit: number;
}

/** Requeues parked rows matching a filter, oldest first, up to `limit`. */
export async function requeueInboxEvents(db: Kysely<DB>, filter: RequeueFilter): Promise<number[]> {
  let selection = db
    .selectFrom('inbox_events')
    .select('id')
    .where('status', '=', 'failed')
    .orderBy('id')
    .limit(filter.limit)
    .forUpdate()
    .skipLocked();
  if (filter.provider) selection = selection.where('provider', '=', filter.provider);
  if (filter.type) selection = selection.where('type', '=', filter.type);
  if (filter.userId) selection = selection.where('user_id', '=', filter.userId);
  if (filter.outcomeCode) selection = selection.where('outcome_code', '=', filter.outcomeCode);
  const rows = await db
    .updateTable('inbox_events')
    .set(freshStart)
    .where('id', 'in', selection)
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}
