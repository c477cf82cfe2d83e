import type { Catalog, DB, InboxHandlers } from '@tally/billing-core';
import {
  createInboxQueue,
  createRedisConnection,
  type Logger,
  type Metrics,
  refreshInboxGauges,
  withTimeout,
} from '@tally/platform';
import type { Kysely } from 'kysely';
import { startRelayLoop } from './loops/relay-loop';
import type { PeriodicLoop } from './loops/run-periodic';
import { createInboxWorker } from './processors/inbox-processor';

export interface WorkerRuntimeOptions {
  db: Kysely<DB>;
  catalog: Catalog;
  logger: Logger;
  metrics: Metrics;
  redisUrl: string;
  queuePrefix: string;
  concurrency: number;
  maxAttempts: number;
  backoff: { baseDelayMs: number; maxDelayMs: number };
  relay: { intervalMs: number; staleAfterMs: number; processingStaleAfterMs: number; batchSize: number };
  shutdownTimeoutMs: number;
  handlers?: InboxHandlers;
}

export interface WorkerRuntime {
  relay: PeriodicLoop;
  /** Refreshes queue and backlog gauges; called before each metrics scrape. */
  refreshGauges(): Promise<void>;
  pingRedis(): Promise<void>;
  /** Stops loops, drains active jobs within the shutdown timeout, then closes connections. */
  stop(): Promise<void>;
}

/** Starts one worker process's share of the fleet: the inbox consumer and the relay loop. */
export function startWorkerRuntime(options: WorkerRuntimeOptions): WorkerRuntime {
  const { logger, metrics } = options;
  const workerConnection = createRedisConnection(options.redisUrl, 'worker');
  const producerConnection = createRedisConnection(options.redisUrl, 'producer');
  const queue = createInboxQueue(producerConnection, options.queuePrefix, options.maxAttempts);
  const worker = createInboxWorker(
    {
      db: options.db,
      catalog: options.catalog,
      maxAttempts: options.maxAttempts,
      logger,
      metrics,
      ...(options.handlers ? { handlers: options.handlers } : {}),
    },
    {
      connection: workerConnection,
      prefix: options.queuePrefix,
      concurrency: options.concurrency,
      backoff: options.backoff,
    },
  );
  const relay = startRelayLoop({ db: options.db, queue, logger, metrics }, options.relay);

  return {
    relay,
    refreshGauges: () => refreshInboxGauges(queue, options.db, metrics),
    async pingRedis() {
      await producerConnection.ping();
    },
    async stop() {
      await relay.stop();
      try {
        // worker.close() waits for active jobs with no limit and can hang while Redis is down.
        await withTimeout(worker.close(), options.shutdownTimeoutMs, 'worker did not drain in time');
      } catch (error) {
        logger.warn({ err: error }, 'forcing the worker closed; unfinished jobs will be retried');
        await worker.close(true).catch(() => undefined);
      }
      await queue.close().catch(() => undefined);
      workerConnection.disconnect();
      producerConnection.disconnect();
    },
  };
}
