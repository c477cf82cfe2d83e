import {
  type AiStudioService,
  type BackoffSettings,
  type DB,
  DEFAULT_FAILURE_BACKOFF,
  DEFAULT_RETRY_LATER,
  emailOutboxSource,
  type InboxHandlers,
  inboxRelaySource,
  type Mailer,
  queueCatalog,
  type RetryLaterSettings,
  type StripeApi,
  studioRelaySource,
} from '@tally/billing-core';
import {
  createInboxQueue,
  createProducerQueue,
  createRedisConnection,
  createStudioQueue,
  createWorkerMetrics,
  handOffInboxEvents,
  type Logger,
  type ProducerQueue,
  refreshQueueGauges,
  type WorkerMetricFamily,
  type WorkerMetrics,
  withTimeout,
} from '@tally/platform';
import type { Worker } from 'bullmq';
import type { Kysely } from 'kysely';
import type { WorkerRole } from './config';
import { type InstallmentsLoopOptions, startInstallmentsLoop } from './loops/installments-loop';
import { type ReconcileLoopOptions, startReconcileLoop } from './loops/reconcile-loop';
import { type RelayOptions, type RelayRoute, startRelayLoop } from './loops/relay-loop';
import { type RetentionLoopOptions, startRetentionLoop } from './loops/retention-loop';
import type { PeriodicLoop } from './loops/run-periodic';
import { type StudioSweeperOptions, startStudioSweeperLoop } from './loops/studio-sweeper-loop';
import { createEmailWorker } from './processors/email-processor';
import { createInboxWorker } from './processors/inbox-processor';
import { createStudioWorker } from './processors/studio-processor';

export interface WorkerRuntimeOptions {
  db: Kysely<DB>;
  /** Built by the composition root from ports (createInboxHandlers). */
  handlers: InboxHandlers;
  logger: Logger;
  redisUrl: string;
  queuePrefix: string;
  /** Which consumers and loops this process runs. */
  roles: readonly WorkerRole[];
  concurrency: number;
  lockDurationMs?: number;
  maxAttempts: number;
  backoff?: BackoffSettings;
  retryLater?: RetryLaterSettings;
  relay: RelayOptions;
  shutdownTimeoutMs: number;
  /** AI Studio consumer ('studio') and sweeper ('studio-sweeper'); see docs/studio.md. */
  studio?: StudioRuntimeOptions;
  /** The installments role's loop settings (defaults: every minute, 5 min stale, 10 attempts). */
  installments?: InstallmentsLoopOptions;
  /** The email role's mailer (SMTP or logging) and retry settings. */
  email?: { mailer: Mailer; maxAttempts?: number; backoff?: BackoffSettings };
  /** The retention role's loop (default: hourly, 90 days). */
  retention?: RetentionLoopOptions;
  /** The reconcile role's loop (opt-in role; default hourly over 3 days) and its Stripe API. */
  reconcile?: ReconcileLoopOptions & { stripe: StripeApi | undefined };
}

export interface StudioRuntimeOptions {
  /** The AI service client; undefined: generations fail as not_configured and are refunded. */
  aiStudio: AiStudioService | undefined;
  concurrency: number;
  maxAttempts: number;
  backoff?: BackoffSettings;
  sweeper: StudioSweeperOptions;
}

const defaultStudioOptions: StudioRuntimeOptions = {
  aiStudio: undefined,
  concurrency: 4,
  maxAttempts: 5,
  sweeper: { intervalMs: 30_000, stuckAfterMs: 5 * 60_000, batchSize: 100 },
};

export interface WorkerRuntime {
  /** The families of this process's roles only (workerMetricFamiliesOf); serve `metrics.registry`. */
  metrics: WorkerMetrics;
  /** The relay loop, when this process has the relay role. */
  relay: PeriodicLoop | undefined;
  /** The studio sweeper loop, when this process has the studio-sweeper role. */
  studioSweeper: PeriodicLoop | undefined;
  /** The installment grant loop, when this process has the installments role. */
  installments: PeriodicLoop | undefined;
  /** The raw-body retention loop, when this process has the retention role. */
  retention: PeriodicLoop | undefined;
  /** The Stripe reconciliation loop, when this process has the reconcile role. */
  reconcile: PeriodicLoop | undefined;
  /**
   * Refreshes the scrape-time gauges (queue depth, backlog, ledger, parked, studio, installments)
   * from Redis and Postgres; called before each metrics scrape. Does nothing without the relay
   * role, which is the one that exports them.
   */
  refreshGauges(): Promise<void>;
  pingRedis(): Promise<void>;
  /** Stops loops, drains active jobs within the shutdown timeout, then closes connections. */
  stop(): Promise<void>;
}

/**
 * The metric families a process with these roles exports: each role's own counters, and the
 * scrape-time gauges of the whole system (`system`) with the relay role only, so they are read
 * by the few scheduler replicas rather than by every inbox consumer at every scrape.
 */
export function workerMetricFamiliesOf(roles: Iterable<WorkerRole>): WorkerMetricFamily[] {
  const set = new Set(roles);
  const families: WorkerMetricFamily[] = [];
  if (set.has('inbox')) families.push('inbox');
  if (set.has('relay')) families.push('relay', 'system');
  if (set.has('reconcile')) families.push('reconcile');
  return families;
}

/**
 * Starts one worker process's share of the fleet, by role: the inbox and studio consumers, the
 * email outbox consumer and the scheduled loops. Every role is safe on any number of replicas:
 * claims are conditional updates or SKIP LOCKED, effects are fenced by references. Registers the
 * metric families of its roles only (workerMetricFamiliesOf).
 */
export function startWorkerRuntime(options: WorkerRuntimeOptions): WorkerRuntime {
  const { logger } = options;
  const roles = new Set(options.roles);
  const metrics = createWorkerMetrics(workerMetricFamiliesOf(roles));
  const workerConnection = createRedisConnection(options.redisUrl, 'worker');
  const producerConnection = createRedisConnection(options.redisUrl, 'producer');
  const inboxQueue = createInboxQueue(producerConnection, options.queuePrefix);
  const studioQueue = createStudioQueue(producerConnection, options.queuePrefix);
  const queues: ProducerQueue<unknown>[] = [
    inboxQueue as ProducerQueue<unknown>,
    studioQueue as ProducerQueue<unknown>,
  ];
  const workers: Worker[] = [];

  if (roles.has('inbox')) {
    workers.push(
      createInboxWorker(
        {
          db: options.db,
          handlers: options.handlers,
          maxAttempts: options.maxAttempts,
          backoff: options.backoff ?? DEFAULT_FAILURE_BACKOFF,
          retryLater: options.retryLater ?? DEFAULT_RETRY_LATER,
          logger,
          metrics,
        },
        {
          connection: workerConnection,
          prefix: options.queuePrefix,
          concurrency: options.concurrency,
          ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
        },
      ),
    );
  }
  const studio = options.studio ?? defaultStudioOptions;
  if (roles.has('studio')) {
    workers.push(
      createStudioWorker(
        {
          db: options.db,
          aiStudio: studio.aiStudio,
          maxAttempts: studio.maxAttempts,
          ...(studio.backoff ? { backoff: studio.backoff } : {}),
          logger,
        },
        {
          connection: workerConnection,
          prefix: options.queuePrefix,
          concurrency: studio.concurrency,
          ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
        },
      ),
    );
  }
  const studioSweeper = roles.has('studio-sweeper')
    ? startStudioSweeperLoop({ db: options.db, logger }, studio.sweeper)
    : undefined;
  const emailQueue = createProducerQueue(producerConnection, options.queuePrefix, queueCatalog.email);
  queues.push(emailQueue as ProducerQueue<unknown>);
  if (roles.has('email')) {
    const email = options.email;
    if (!email) throw new Error('the email role needs a mailer');
    workers.push(
      createEmailWorker(
        {
          db: options.db,
          mailer: email.mailer,
          logger,
          ...(email.maxAttempts === undefined ? {} : { maxAttempts: email.maxAttempts }),
          ...(email.backoff === undefined ? {} : { backoff: email.backoff }),
          // The relay hands back rows stuck in processing after this long; the claim must take them.
          processingStaleAfterMs: options.relay.processingStaleAfterMs,
        },
        {
          connection: workerConnection,
          prefix: options.queuePrefix,
          concurrency: options.concurrency,
          ...(options.lockDurationMs === undefined ? {} : { lockDurationMs: options.lockDurationMs }),
        },
      ),
    );
  }
  const installments = roles.has('installments')
    ? startInstallmentsLoop(
        { db: options.db, logger },
        options.installments ?? {
          intervalMs: 60_000,
          batchSize: 100,
          processingStaleAfterMs: 5 * 60_000,
          maxAttempts: 10,
        },
      )
    : undefined;
  const retention = roles.has('retention')
    ? startRetentionLoop({ db: options.db, logger }, options.retention ?? { intervalMs: 3600_000, retentionDays: 90 })
    : undefined;
  const reconcile = roles.has('reconcile')
    ? startReconcileLoop(
        {
          db: options.db,
          stripe: options.reconcile?.stripe,
          enqueue: (ids) => handOffInboxEvents(inboxQueue, options.db, ids),
          logger,
          onReport: (report) => metrics.recordReconciliation(report),
        },
        options.reconcile ?? { intervalMs: 3600_000, windowDays: 3 },
      )
    : undefined;
  // Queue depth for every catalog queue, whether or not this process produces to it.
  const gaugeQueues = (metrics.families.has('system') ? Object.values(queueCatalog) : []).map((definition) => {
    const existing = queues.find((queue) => queue.name === definition.name);
    if (existing) return existing;
    const queue = createProducerQueue(
      producerConnection,
      options.queuePrefix,
      definition as never,
    ) as ProducerQueue<unknown>;
    queues.push(queue);
    return queue;
  });
  const relayRoutes: RelayRoute[] = [
    { source: inboxRelaySource, queue: inboxQueue } as RelayRoute,
    { source: studioRelaySource, queue: studioQueue } as RelayRoute,
    { source: emailOutboxSource, queue: emailQueue } as RelayRoute,
  ];
  const relay = roles.has('relay')
    ? startRelayLoop({ db: options.db, routes: relayRoutes, logger, metrics }, options.relay)
    : undefined;

  return {
    metrics,
    relay,
    studioSweeper,
    installments,
    retention,
    reconcile,
    refreshGauges: async () => {
      if (metrics.families.has('system')) await refreshQueueGauges(gaugeQueues, options.db, metrics);
    },
    async pingRedis() {
      await producerConnection.ping();
    },
    async stop() {
      await relay?.stop();
      await studioSweeper?.stop();
      await installments?.stop();
      await retention?.stop();
      await reconcile?.stop();
      await Promise.all(
        workers.map(async (worker) => {
          try {
            // worker.close() waits for active jobs with no limit and can hang while Redis is down.
            await withTimeout(worker.close(), options.shutdownTimeoutMs, 'worker did not drain in time');
          } catch (error) {
            logger.warn(
              { err: error, queue: worker.name },
              'forcing the worker closed; unfinished jobs will be retried',
            );
            await worker.close(true).catch(() => undefined);
          }
        }),
      );
      await Promise.all(queues.map((queue) => queue.close().catch(() => undefined)));
      workerConnection.disconnect();
      producerConnection.disconnect();
    },
  };
}
