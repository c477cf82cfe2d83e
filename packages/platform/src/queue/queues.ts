import { type JobsOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { withTimeout } from '../lifecycle/with-timeout';

/**
 * What a producer reads of a queue definition. The apps pass entries of billing-core's queue
 * catalog (which documents each field); this package names only the shape it uses, so the
 * plumbing does not depend on the domain.
 */
export interface QueueDefinition<Payload> {
  name: string;
  jobId(payload: Payload): string;
  attempts: number;
  backoffDelayMs: number;
  retention: { completedAgeSeconds: number; completedCount: number; failedAgeSeconds: number };
}

/**
 * What a hand-off reads of a durable row table (billing-core's DurableRowSource): the job of a
 * row, and how to release the rows it could not hand off so the relay takes them again.
 */
export interface HandOffSource<Payload, Db> {
  toPayload(id: number): Payload;
  releaseHandOff(db: Db, ids: readonly number[]): Promise<void>;
}

/** BullMQ options from a queue catalog entry: every producer of a queue uses exactly these. */
export function jobOptionsFor(definition: QueueDefinition<never>): JobsOptions {
  return {
    attempts: definition.attempts,
    backoff: { type: 'exponential', delay: definition.backoffDelayMs },
    removeOnComplete: { age: definition.retention.completedAgeSeconds, count: definition.retention.completedCount },
    removeOnFail: { age: definition.retention.failedAgeSeconds },
  };
}

export type ProducerQueue<Payload> = Queue<Payload, unknown, string> & {
  readonly definition: QueueDefinition<Payload>;
};

/** A producer handle on a catalog queue. */
export function createProducerQueue<Payload>(
  connection: Redis,
  prefix: string,
  definition: QueueDefinition<Payload>,
): ProducerQueue<Payload> {
  const queue = new Queue<Payload, unknown, string>(definition.name, {
    connection,
    prefix,
    defaultJobOptions: jobOptionsFor(definition as QueueDefinition<never>),
  });
  return Object.assign(queue, { definition });
}

export type EnqueueResult = 'enqueued' | 'already-queued';

/** No enqueue waits longer than this: callers fall back on the relay instead. */
export const ENQUEUE_TIMEOUT_MS = 2_000;

/**
 * BullMQ waits for a connection to come back before it sends a command, which would hold a
 * webhook answer hostage to a Redis outage. A producer whose connection is not ready fails at once.
 */
function assertConnected(queue: Queue): void {
  const connection = queue.opts.connection;
  if (connection instanceof Redis && connection.status !== 'ready') {
    throw new Error(`Redis connection is ${connection.status}; not enqueuing`);
  }
}

/**
 * Hands a durable row's job to its queue. One job id per row means BullMQ ignores the add while
 * a job for the row still waits, is delayed or runs (`already-queued`). With `replaceFinished`,
 * a job that already completed or failed (kept for the dashboard's retention window) is removed
 * first so the row runs again: the relay, requeue and replay need this; ingest does not.
 * Throws when Redis is unreachable or slow.
 */
export async function enqueueJob<Payload>(
  queue: ProducerQueue<Payload>,
  payload: Payload,
  options: { replaceFinished?: boolean } = {},
): Promise<EnqueueResult> {
  assertConnected(queue);
  return withTimeout(addJob(queue, payload, options), ENQUEUE_TIMEOUT_MS, 'enqueue timed out');
}

async function addJob<Payload>(
  queue: ProducerQueue<Payload>,
  payload: Payload,
  options: { replaceFinished?: boolean },
): Promise<EnqueueResult> {
  const jobId = queue.definition.jobId(payload);
  // Ingest's rows are new: no look-up on the hot path (BullMQ ignores an add whose id exists).
  if (options.replaceFinished) {
    const existing = await queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return 'already-queued';
      await existing.remove();
    }
  }
  // biome-ignore lint/suspicious/noExplicitAny: BullMQ's generic name/data types do not narrow through ProducerQueue
  await (queue as Queue<any, unknown, string>).add('process', payload, { jobId });
  return 'enqueued';
}

/**
 * Ingest's hand-off of many new rows in one round trip (BullMQ `addBulk`, one job id per row as
 * in enqueueJob). All or nothing for the caller: on any error every row is treated as not
 * handed off (the caller releases them to the relay; a job that did get added is then found by
 * the relay and left alone). Throws when Redis is unreachable or slow.
 */
export async function enqueueJobs<Payload>(queue: ProducerQueue<Payload>, payloads: readonly Payload[]): Promise<void> {
  if (payloads.length === 0) return;
  assertConnected(queue);
  // One job: a plain add (one script call). addBulk wraps even one job in MULTI/EXEC, which costs
  // Redis and this process more, and at low load every ingest batch is one webhook.
  if (payloads.length === 1) {
    await enqueueJob(queue, payloads[0] as Payload);
    return;
  }
  const jobs = payloads.map((payload) => ({
    name: 'process',
    data: payload,
    opts: { ...jobOptionsFor(queue.definition as QueueDefinition<never>), jobId: queue.definition.jobId(payload) },
  }));
  // biome-ignore lint/suspicious/noExplicitAny: BullMQ's generic name/data types do not narrow through ProducerQueue
  await withTimeout((queue as Queue<any, unknown, string>).addBulk(jobs), ENQUEUE_TIMEOUT_MS, 'enqueue timed out');
}

export interface HandOffResult {
  /** Jobs that were really missing and were added. */
  enqueued: number;
  /** Rows whose job still existed (waiting, delayed, active): nothing was added. */
  alreadyQueued: number;
  /** Rows not handed off because the queue failed; their enqueued_at is cleared for the relay. */
  deferred: number;
  error?: unknown;
}

/**
 * Enqueues existing durable rows (relay, requeue, replay), replacing finished jobs. Stops at the
 * first failure and releases the rows not handed off, so the relay retries them.
 */
export async function handOffRows<Payload, Db>(
  queue: ProducerQueue<Payload>,
  source: HandOffSource<Payload, Db>,
  db: Db,
  ids: readonly number[],
): Promise<HandOffResult> {
  let enqueued = 0;
  let alreadyQueued = 0;
  for (const [index, id] of ids.entries()) {
    try {
      const result = await enqueueJob(queue, source.toPayload(id), { replaceFinished: true });
      if (result === 'enqueued') enqueued += 1;
      else alreadyQueued += 1;
    } catch (error) {
      const unsent = ids.slice(index);
      await source.releaseHandOff(db, unsent);
      return { enqueued, alreadyQueued, deferred: unsent.length, error };
    }
  }
  return { enqueued, alreadyQueued, deferred: 0 };
}
