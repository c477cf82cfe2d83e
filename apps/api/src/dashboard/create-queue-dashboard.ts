import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { HookContext } from '@bull-board/api/typings/app';
import { adminActions, type CatalogQueue, type DB, queueCatalog } from '@tally/billing-core';
import { createProducerQueue, type ProducerQueue } from '@tally/platform';
import type { Job } from 'bullmq';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { AuditedExpressAdapter, type DashboardActions } from './audited-express-adapter';

/** A job the dashboard is about to retry: its id and payload. */
export interface RetriedJob {
  id: string;
  data: unknown;
}

/**
 * Puts the durable rows behind failed jobs back to work before the dashboard retries those jobs,
 * exactly as the admin requeue does. A queue whose consumer skips rows that are not due (the
 * inbox and the email outbox: a parked row is `failed`, and a job for it does nothing) needs one,
 * or a retry there would only run a job that skips.
 */
export type RetryReset = (jobs: readonly RetriedJob[]) => Promise<void>;

export interface QueueDashboard {
  router: Express;
  /** The catalog queues shown, by name. */
  queueNames: string[];
  /** Their producer handles (the console reads their depths through them). */
  queues: ProducerQueue<unknown>[];
  close(): Promise<void>;
}

const RETRY_ONE = '/api/queues/:queueName/:jobId/retry';
const RETRY_ALL = '/api/queues/:queueName/retry/:queueStatus';
/** The dashboard's actions the audit names; every other one is audited under its route. */
const namedActions: DashboardActions = {
  [`put ${RETRY_ONE}`]: { action: adminActions.queueRetryJob, target: { kind: 'queue_job', param: 'jobId' } },
  [`put ${RETRY_ALL}`]: { action: adminActions.queueRetryAll },
};
const PAGE_SIZE = 100;

/**
 * Bull Board over every queue of the queue catalog (a queue added to the catalog shows up with no
 * change here). Mount it at `basePath` behind the admin key: its actions are audited
 * (AuditedExpressAdapter), each recorded before it runs.
 *
 * Retry rule: for a queue with a RetryReset, retrying failed jobs first resets their rows (the
 * same conditional `failed → received` fresh start as requeue), then lets BullMQ move the jobs
 * back to waiting; the consumer then claims the rows as usual. Retrying completed jobs of such a
 * queue is refused (finished events are replayed, not retried). Nothing else resets a row: a job
 * that runs again for a parked row by any other route (a stalled job re-run, a queue-level retry,
 * a duplicate add) finds it `failed` and does nothing.
 */
export function createQueueDashboard(deps: {
  connection: Redis;
  prefix: string;
  basePath: string;
  /** Where the audit rows of its actions go. */
  db: Kysely<DB>;
  retryResets: Readonly<Record<string, RetryReset>>;
}): QueueDashboard {
  const definitions = Object.values(queueCatalog) as readonly CatalogQueue<unknown>[];
  const queues = new Map<string, ProducerQueue<unknown>>(
    definitions.map((definition) => [definition.name, createProducerQueue(deps.connection, deps.prefix, definition)]),
  );

  const serverAdapter = new AuditedExpressAdapter({ db: deps.db, actions: namedActions });
  serverAdapter.setBasePath(deps.basePath);
  createBullBoard({
    queues: [...queues.values()].map(
      (queue) =>
        new BullMQAdapter(queue, {
          description: describeRetention(queue.definition),
          ...(deps.retryResets[queue.name] ? ({ allowCompletedRetries: false } as object) : {}),
        }),
    ),
    serverAdapter,
    options: {
      uiConfig: { boardTitle: 'Tally queues' },
      handlerHooks: {
        before: async (context: HookContext) => {
          const { params } = context.request;
          const reset = deps.retryResets[String(params.queueName)];
          const queue = queues.get(String(params.queueName));
          if (!reset || !queue) return;
          if (context.route === RETRY_ONE) return beforeRetryOne(queue, String(params.jobId), reset);
          if (context.route === RETRY_ALL) return beforeRetryAll(queue, String(params.queueStatus), reset);
          return;
        },
      },
    },
  });

  return {
    router: serverAdapter.getRouter() as Express,
    queueNames: [...queues.keys()],
    queues: [...queues.values()],
    close: async () => {
      await Promise.all([...queues.values()].map((queue) => queue.close().catch(() => undefined)));
    },
  };
}

const refuseCompleted = {
  allow: false,
  status: 400,
  message:
    'a completed job is not retried here: its row is finished (an inbox event is replayed instead: POST /admin/events/{id}/replay, tally replay)',
} as const;

async function beforeRetryOne(queue: ProducerQueue<unknown>, jobId: string, reset: RetryReset) {
  const job = await queue.getJob(jobId);
  if (!job) return;
  const state = await job.getState();
  if (state === 'completed') return refuseCompleted;
  if (state === 'failed') await reset([toRetriedJob(job)]);
  return;
}

async function beforeRetryAll(queue: ProducerQueue<unknown>, status: string, reset: RetryReset) {
  if (status === 'completed') return refuseCompleted;
  if (status !== 'failed') return;
  // Reset every failed job's row first; a job failing after this is retried without a reset and
  // then skips (its row stays parked), which errs on the safe side.
  for (let start = 0; ; start += PAGE_SIZE) {
    const jobs = await queue.getJobs(['failed'], start, start + PAGE_SIZE - 1);
    if (jobs.length === 0) return;
    await reset(jobs.map(toRetriedJob));
  }
}

function toRetriedJob(job: Job): RetriedJob {
  return { id: String(job.id), data: job.data };
}

function describeRetention(definition: Pick<CatalogQueue<unknown>, 'retention'>): string {
  const days = (seconds: number) => `${Math.round((seconds / 86_400) * 10) / 10} d`;
  const { completedAgeSeconds, completedCount, failedAgeSeconds } = definition.retention;
  return `completed jobs kept ${days(completedAgeSeconds)} (at most ${completedCount}), failed jobs ${days(failedAgeSeconds)}`;
}
