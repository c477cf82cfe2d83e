import {
  type DB,
  findOldestDueAgeSeconds,
  type InboxJob,
  inboxRelaySource,
  queueCatalog,
  readOperationalCounts,
} from '@tally/billing-core';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { WorkerMetrics } from '../metrics/metrics';
import { createProducerQueue, enqueueJobs, type HandOffResult, handOffRows, type ProducerQueue } from './queues';

export type InboxQueue = ProducerQueue<InboxJob>;

export function createInboxQueue(connection: Redis, prefix: string): InboxQueue {
  return createProducerQueue(connection, prefix, queueCatalog.inbox);
}

/** Ingest's batched hand-off of new rows: one addBulk (one plain add for a single row). */
export function enqueueInboxEvents(queue: InboxQueue, inboxEventIds: readonly number[]): Promise<void> {
  return enqueueJobs(
    queue,
    inboxEventIds.map((inboxEventId) => ({ inboxEventId })),
  );
}

/** Requeue, replay: hand existing rows to the queue again (the relay picks up what fails). */
export function handOffInboxEvents(queue: InboxQueue, db: Kysely<DB>, ids: readonly number[]): Promise<HandOffResult> {
  return handOffRows(queue, inboxRelaySource, db, ids);
}

/** Sets the queue-depth and backlog gauges; called before a metrics scrape. */
export async function refreshQueueGauges(
  queues: readonly ProducerQueue<unknown>[],
  db: Kysely<DB>,
  metrics: WorkerMetrics,
): Promise<void> {
  for (const queue of queues) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
    for (const [state, count] of Object.entries(counts)) metrics.queueJobs.set({ queue: queue.name, state }, count);
  }
  metrics.oldestPendingAge.set(await findOldestDueAgeSeconds(db));
  metrics.setOperationalCounts(await readOperationalCounts(db));
}
