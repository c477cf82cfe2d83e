import { type JobsOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { withTimeout } from '../lifecycle/with-timeout';

/**
 * A queue definition: the one declaration of what the queue plumbing reads. The apps pass the
 * entries of billing-core's queue catalog, values built to this shape (`defineQueue`) without
 * naming it, so the plumbing does not depend on the domain nor the domain on BullMQ.
 */
export interface QueueDefinition<Payload> {
  name: string;
  /**
   * BullMQ job ids may not contain ':' nor be all digits. One id per durable row means a second
   * enqueue of a row that is still waiting is ignored instead of running it twice.
   */
  jobId(payload: Payload): string;
  /** Queue-level attempts (BullMQ `attempts`), for failures the job's own row does not count. */
  attempts: number;
  /** First delay of the queue-level exponential backoff. */
  backoffDelayMs: number;
  /** Finished jobs stay visible in the dashboard this long; Postgres keeps everything. */
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

/**
 * Closes producer queues before their shared connection is closed. A queue still starting (it
 * reads the Redis version once connected) is first given `settleMs` to finish: BullMQ's close of
 * a queue on a shared connection drops the queue's error listeners without waiting for that
 * start-up, so a connection closed right after would fail the start-up command on an emitter
 * with no listener, an unhandled rejection (a worker stopped right after it started). With Redis
 * down the start-up never finishes and the queue is closed after `settleMs` anyway.
 */
export async function closeProducerQueues(queues: Iterable<Queue>, settleMs = 1_000): Promise<void> {
  await Promise.all(
    [...queues].map(async (queue) => {
      await withTimeout(queue.waitUntilReady(), settleMs, 'queue start-up').catch(() => undefined);
      await queue.close().catch(() => undefined);
    }),
  );
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

export interface CommittedRowsHandOff {
  /**
   * Hands rows whose transaction has just committed to their queue (one enqueue for all of them),
   * behind the caller. Returns a promise only when the caller must wait for it: more than
   * `maxPending` hand-offs are already running behind (Redis slower than Postgres), so they and
   * the ids they hold stay bounded. Never rejects: rows it could not hand off are released to the
   * relay (enqueued_at cleared), which also covers a process that dies before the hand-off.
   */
  handOff(ids: readonly number[]): Promise<void> | undefined;
  /** Resolves once every hand-off started so far has finished (before the connections close). */
  drain(): Promise<void>;
}

/**
 * The hand-off of new durable rows right after their commit, as ingest does for the inbox (its
 * batcher inlines the same steps): the rows are written with enqueued_at = now(), the enqueue
 * follows the commit, a failure releases them at once, and a process dying in between leaves them
 * to the relay once the stamp is stale. New rows: a plain add, no look-up of an existing job.
 */
export function createCommittedRowsHandOff<Payload, Db>(options: {
  queue: ProducerQueue<Payload>;
  source: HandOffSource<Payload, Db>;
  db: Db;
  logger: Logger;
  /** Hand-offs allowed to run behind their callers (default 16, as ingest's). */
  maxPending?: number;
}): CommittedRowsHandOff {
  const maxPending = options.maxPending ?? 16;
  const running = new Set<Promise<void>>();
  return {
    handOff(ids) {
      if (ids.length === 0) return undefined;
      const rows = [...ids];
      const run = (async () => {
        try {
          await enqueueJobs(
            options.queue,
            rows.map((id) => options.source.toPayload(id)),
          );
        } catch (error) {
          options.logger.warn(
            { err: error, queue: options.queue.name, ids: rows },
            'hand-off after commit failed; the relay will enqueue these rows',
          );
          await options.source.releaseHandOff(options.db, rows).catch(() => undefined);
        }
      })();
      running.add(run);
      void run.finally(() => running.delete(run));
      return running.size > maxPending ? run : undefined;
    },
    async drain() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
