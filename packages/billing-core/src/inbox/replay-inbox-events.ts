import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { freshStart } from './fresh-start';
import type { RequeueFilter } from './requeue-inbox-events';

/**
 * Re-runs a finished event (processed or ignored) through the current handler: received again,
 * attempts 0, replay counted. Safe because every effect is keyed by a deterministic reference: a
 * processed token-pack purchase credits nothing the second time, while an event ignored before
 * its handler existed is now applied. Returns the id when the row was finished, else null.
 */
export async function replayInboxEvent(db: Kysely<DB>, inboxEventId: number): Promise<number | null> {
  const row = await db
    .updateTable('inbox_events')
    .set({ ...freshStart, replays: sql`replays + 1`, replayed_at: sql`now()` })
    .where('id', '=', inboxEventId)
    .where('status', 'in', ['processed', 'ignored'])
    // A pruned body (retention) cannot be parsed again.
    .where('raw_body_pruned_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
}

export interface ReplayFilter extends RequeueFilter {
  status?: 'processed' | 'ignored' | undefined;
}

/** Replays finished rows matching a filter, oldest first, up to `limit`. */
export async function replayInboxEvents(db: Kysely<DB>, filter: ReplayFilter): Promise<number[]> {
  let selection = db
    .selectFrom('inbox_events')
    .select('id')
    .where('status', 'in', filter.status ? [filter.status] : ['processed', 'ignored'])
    .where('raw_body_pruned_at', 'is', null)
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
    .set({ ...freshStart, replays: sql`replays + 1`, replayed_at: sql`now()` })
    .where('id', 'in', selection)
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}
