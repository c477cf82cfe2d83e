import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { replayStart, startAfresh } from './fresh-start';
import { matchingInboxEvents } from './list-inbox-events';
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
    .set(replayStart)
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
export function replayInboxEvents(db: Kysely<DB>, filter: ReplayFilter): Promise<number[]> {
  return startAfresh(db, replayStart, filter.limit, (eb) =>
    eb.and([
      eb('status', 'in', filter.status ? [filter.status] : ['processed', 'ignored']),
      eb('raw_body_pruned_at', 'is', null),
      matchingInboxEvents(filter)(eb),
    ]),
  );
}
