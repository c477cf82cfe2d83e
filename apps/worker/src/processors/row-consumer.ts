import type { Logger } from '@tally/platform';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { logWorkerErrors } from './worker-errors';

/** Where a consumer takes its jobs and how many at once. */
export interface ConsumerOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  /**
   * How long a job's lock lives without renewal (WORKER_LOCK_DURATION_MS), and the stalled check's
   * interval: a worker that dies mid-job holds its job this long before BullMQ hands it to another
   * (without it, BullMQ's default: about a minute).
   */
  lockDurationMs: number;
}

/**
 * A BullMQ consumer of one of the durable-row queues of the catalog, whose row, not the job, owns
 * the schedule: `handle` gets each job's payload parsed by the queue's schema. Its errors are
 * logged as `what` (logWorkerErrors); `maxStalledCount` as BullMQ's (default 1).
 */
export function createRowConsumer<Payload>(
  queue: { name: string; payload: { parse(data: unknown): Payload } },
  consumer: { options: ConsumerOptions & { maxStalledCount?: number }; logger: Logger; what: string },
  handle: (payload: Payload, job: Job, token: string | undefined) => Promise<unknown>,
): Worker {
  const { options, logger, what } = consumer;
  const processor = async (job: Job, token?: string) => handle(queue.payload.parse(job.data), job, token);
  const worker = new Worker(queue.name, processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.lockDurationMs,
    ...(options.maxStalledCount === undefined ? {} : { maxStalledCount: options.maxStalledCount }),
  });
  logWorkerErrors(worker, logger, what);
  return worker;
}

/**
 * Delays the job to the moment the row set for its next attempt and ends this run of it
 * (DelayedError: BullMQ counts no attempt, so queue-level attempts never decide anything).
 */
export async function delayJob(job: Job, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/** The end of a switch over a result union: a compile error when a kind is left out. */
export function unhandledResult(result: never): never {
  throw new Error(`unhandled result ${JSON.stringify(result)}`);
}
