import { type DB, findInboxEvent, replayInboxEvent, requeueInboxEvent } from '@tally/billing-core';
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
export async function requeueOneEvent(db: Kysely<DB>, id: number): Promise<InboxActionResult> {
  const requeued = await requeueInboxEvent(db, id);
  if (requeued !== null) return { kind: 'done', ids: [requeued] };
  const event = await findInboxEvent(db, id);
  if (!event) return notFound(id);
  return {
    kind: 'refused',
    status: 409,
    code: 'not_parked',
    message: `inbox event ${id} is ${event.status}; only failed events are requeued`,
  };
}

/** Replay of one finished event through the current handler (references make it safe), or why not. */
export async function replayOneEvent(db: Kysely<DB>, id: number): Promise<InboxActionResult> {
  const replayed = await replayInboxEvent(db, id);
  if (replayed !== null) return { kind: 'done', ids: [replayed] };
  const event = await findInboxEvent(db, id);
  if (!event) return notFound(id);
  return {
    kind: 'refused',
    status: 409,
    code: 'not_finished',
    message: event.raw_body_pruned_at
      ? `inbox event ${id} lost its raw body to retention; it cannot be replayed`
      : `inbox event ${id} is ${event.status}; only processed or ignored events are replayed (requeue parked ones)`,
  };
}

/** Hands rows to the queue and says what happened; rows it could not hand off wait for the relay. */
export async function deliver(deps: InboxActionDeps, ids: number[]) {
  if (ids.length === 0) return { enqueued: 0, alreadyQueued: 0, deferred: 0 };
  const { enqueued, alreadyQueued, deferred } = await deps.enqueue(ids);
  return { enqueued, alreadyQueued, deferred };
}

function notFound(id: number): InboxActionResult {
  return { kind: 'refused', status: 404, code: 'not_found', message: `inbox event ${id} does not exist` };
}
