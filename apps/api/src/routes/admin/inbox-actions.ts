import { type DB, findInboxEvent, replayInboxEvent, requeueInboxEvent } from '@tally/billing-core';
import type { Kysely } from 'kysely';

export interface InboxActionDeps {
  db: Kysely<DB>;
  /** Hands ids to the queue; a failure leaves them for the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;
}

export type InboxActionOutcome =
  | { kind: 'done'; ids: number[]; enqueued: number; alreadyQueued: number; deferred: number }
  | { kind: 'refused'; status: 404 | 409; code: 'not_found' | 'not_parked' | 'not_finished'; message: string };

/**
 * Requeue of one parked event, as the admin API and the console run it: the fresh start
 * (`failed → received`) then the hand-off; otherwise why not (404 unknown, 409 not parked).
 */
export async function requeueOneEvent(deps: InboxActionDeps, id: number): Promise<InboxActionOutcome> {
  const requeued = await requeueInboxEvent(deps.db, id);
  if (requeued === null) {
    const event = await findInboxEvent(deps.db, id);
    if (!event) return notFound(id);
    return {
      kind: 'refused',
      status: 409,
      code: 'not_parked',
      message: `inbox event ${id} is ${event.status}; only failed events are requeued`,
    };
  }
  return { kind: 'done', ids: [requeued], ...(await deliver(deps, [requeued])) };
}

/** Replay of one finished event through the current handler (references make it safe), or why not. */
export async function replayOneEvent(deps: InboxActionDeps, id: number): Promise<InboxActionOutcome> {
  const replayed = await replayInboxEvent(deps.db, id);
  if (replayed === null) {
    const event = await findInboxEvent(deps.db, id);
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
  return { kind: 'done', ids: [replayed], ...(await deliver(deps, [replayed])) };
}

/** Hands rows to the queue and says what happened; rows it could not hand off wait for the relay. */
export async function deliver(deps: InboxActionDeps, ids: number[]) {
  const { enqueued, alreadyQueued, deferred } = await deps.enqueue(ids);
  return { enqueued, alreadyQueued, deferred };
}

function notFound(id: number): InboxActionOutcome {
  return { kind: 'refused', status: 404, code: 'not_found', message: `inbox event ${id} does not exist` };
}
