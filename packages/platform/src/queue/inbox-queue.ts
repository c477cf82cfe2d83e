import {
  type DB,
  findOldestPendingAgeSeconds,
  type InboxJob,
  inboxJobId,
  markInboxEnqueueFailed,
  queueNames,
} from '@tally/billing-core';
import { type JobsOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { withTimeout } from '../lifecycle/with-timeout';
import type { Metrics } from '../metrics/metrics';

/** Kept this long so operators see finished jobs in the dashboard; Postgres keeps everything. */
export const COMPLETED_JOB_RETENTION_SECONDS = 7 * 24 * 3600;
export const FAILED_JOB_RETENTION_SECONDS = 30 * 24 * 3600;
/** Queue-level cap; the inbox row's own attempt count (INBOX_MAX_ATTEMPTS) decides parking. */
export const DEFAULT_INBOX_JOB_ATTEMPTS = 15;

export function inboxJobOptions(attempts = DEFAULT_INBOX_JOB_ATTEMPTS): JobsOptions {
  return {
    attempts,
    backoff: { type: 'inbox' },
    removeOnComplete: { age: COMPLETED_JOB_RETENTION_SECONDS, count: 50_000 },
    removeOnFail: { age: FAILED_JOB_RETENTION_SECONDS },
  };
}

export type InboxQueue = Queue<InboxJob, unknown, string>;

export function createInboxQueue(connection: Redis, prefix: string, attempts?: number): InboxQueue {
  return new Queue<InboxJob, unknown, string>(queueNames.inbox, {
    connection,
    prefix,
    defaultJobOptions: inboxJobOptions(attempts),
  });
}

export type EnqueueResult = 'enqueued' | 'already-queued';

/** No enqueue waits longer than this: callers fall back on the relay instead. */
export const ENQUEUE_TIMEOUT_MS = 2_000;

/**
 * BullMQ waits for a connection to come back before it sends a command, which would hold a
 * webhook answer hostage to a Redis outage. A producer whose connection is not ready fails at once.
 */
function assertConnected(queue: InboxQueue): void {
  const connection = queue.opts.connection;
  if (connection instanceof Redis && connection.status !== 'ready') {
    throw new Error(`Redis connection is ${connection.status}; not enqueuing`);
  }
}

/**
 * Hands an inbox row's id to the queue. A job id per row means BullMQ ignores the add while a
 * job for the row still waits, is delayed or runs. With `replaceFinished`, a job that already
 * completed or failed (kept for the dashboard's retention window) is removed first, so the row
 * runs again: the relay and requeue need this, ingest does not (its rows are new).
 * Throws when Redis is unreachable.
 */
export async function enqueueInboxEvent(
  queue: InboxQueue,
  inboxEventId: number,
  options: { replaceFinished?: boolean } = {},
): Promise<EnqueueResult> {
  assertConnected(queue);
  return withTimeout(addInboxJob(queue, inboxEventId, options), ENQUEUE_TIMEOUT_MS, 'enqueue timed out');
}

async function addInboxJob(
  queue: InboxQueue,
  inboxEventId: number,
  options: { replaceFinished?: boolean },
): Promise<EnqueueResult> {
  const jobId = inboxJobId(inboxEventId);
  if (options.replaceFinished) {
    const existing = await queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return 'already-queued';
      await existing.remove();
    }
  }
  await queue.add('process', { inboxEventId }, { jobId });
  return 'enqueued';
}

/**
 * Enqueues several existing rows (relay, requeue), replacing finished jobs. Stops at the first
 * failure and clears enqueued_at on the rows not handed off, so the relay retries them.
 */
export async function handOffInboxEvents(
  queue: InboxQueue,
  db: Kysely<DB>,
  inboxEventIds: readonly number[],
): Promise<{ enqueued: number; deferred: number; error?: unknown }> {
  for (const [index, id] of inboxEventIds.entries()) {
    try {
      await enqueueInboxEvent(queue, id, { replaceFinished: true });
    } catch (error) {
      const unsent = inboxEventIds.slice(index);
      await markInboxEnqueueFailed(db, unsent);
      return { enqueued: index, deferred: unsent.length, error };
    }
  }
  return { enqueued: inboxEventIds.length, deferred: 0 };
}

/** Sets the queue-depth and backlog gauges; called before a metrics scrape. */
export async function refreshInboxGauges(queue: InboxQueue, db: Kysely<DB>, metrics: Metrics): Promise<void> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
  for (const [state, count] of Object.entries(counts)) metrics.queueJobs.set({ queue: queueNames.inbox, state }, count);
  metrics.oldestPendingAge.set(await findOldestPendingAgeSeconds(db));
}
