import { type DB, findInboxEvent, type InboxEventRow, replayInboxEvent, requeueInboxEvent } from '@tally/billing-core';
import type { Kysely } from 'kysely';

export interface InboxActionDeps {
  db: Kysely<DB>;
  /** Hands ids to the queue; a failure leaves them for the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;
}

/** What an action on one event did in the database (the queue hand-off comes after the commit). */
export type InboxActionResult =
  | { kind: 'done'; ids: number[] }
  | { kind: 'refused'; status: 404 | 409; code: 'not_found' | 'not_parked' | 'not_finished'; message: string };

/**
 * Requeue of one parked event, as the admin API and the console run it, inside the caller's
 * transaction (with its audit row): the fresh start (`failed → received`), or why not (404
 * unknown, 409 not parked). The caller hands the id to the queue once committed (`deliver`).
 */
export function requeueOneEvent(db: Kysely<DB>, id: number): Promise<InboxActionResult> {
  const refusal = (event: InboxEventRow) => `inbox event ${id} is ${event.status}; only failed events are requeued`;
  return actOnOneEvent(db, id, requeueInboxEvent, 'not_parked', refusal);
}

/** Replay of one finished event through the current handler (references make it safe), or why not. */
export function replayOneEvent(db: Kysely<DB>, id: number): Promise<InboxActionResult> {
  return actOnOneEvent(db, id, replayInboxEvent, 'not_finished', (event) =>
    event.raw_body_pruned_at
      ? `inbox event ${id} lost its raw body to retention; it cannot be replayed`
      : `inbox event ${id} is ${event.status}; only processed or ignored events are replayed (requeue parked ones)`,
  );
}

/**
 * One event's action: the id it gave a fresh start, or why not: 404 for an unknown event, else
 * 409 `code`, with what `refusal` says of the row as it is.
 */
async function actOnOneEvent(
  db: Kysely<DB>,
  id: number,
  act: (db: Kysely<DB>, id: number) => Promise<number | null>,
  code: 'not_parked' | 'not_finished',
  refusal: (event: InboxEventRow) => string,
): Promise<InboxActionResult> {
  const done = await act(db, id);
  if (done !== null) return { kind: 'done', ids: [done] };
  const event = await findInboxEvent(db, id);
  if (!event) return { kind: 'refused', status: 404, code: 'not_found', message: `inbox event ${id} does not exist` };
  return { kind: 'refused', status: 409, code, message: refusal(event) };
}

/** Hands rows to the queue and says what happened; rows it could not hand off wait for the relay. */
export async function deliver(deps: InboxActionDeps, ids: number[]) {
  if (ids.length === 0) return { enqueued: 0, alreadyQueued: 0, deferred: 0 };
  const { enqueued, alreadyQueued, deferred } = await deps.enqueue(ids);
  return { enqueued, alreadyQueued, deferred };
}
