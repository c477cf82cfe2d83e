import { createDb, exampleCatalogPath, loadCatalog } from '@tally/billing-core';
import {
  createHealthRoutes,
  createLogger,
  createMetrics,
  loadDotEnv,
  parseEnv,
  runMain,
  startHttpServer,
} from '@tally/platform';
import express from 'express';
import { sql } from 'kysely';
import { workerEnvSchema } from './config';
import { startWorkerRuntime } from './worker-runtime';

// The composition root: the only place that reads process.env.
runMain('worker', async () => {
  loadDotEnv();
  const config = parseEnv(workerEnvSchema, process.env);
  const catalog = loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const logger = createLogger({ name: 'worker', level: config.LOG_LEVEL });
  const metrics = createMetrics('worker');
  const database = createDb({
    connectionString: config.DATABASE_URL,
    applicationName: 'tally-worker',
    maxConnections: config.WORKER_CONCURRENCY + 4,
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost; jobs retry until it is back'),
  });
  // Three fifths of the shutdown budget for draining jobs; the rest for closing connections.
  const drainTimeoutMs = Math.floor(config.SHUTDOWN_TIMEOUT_MS * 0.6);
  const runtime = startWorkerRuntime({
    db: database.db,
    catalog,
    logger,
    metrics,
    redisUrl: config.REDIS_URL,
    queuePrefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    maxAttempts: config.INBOX_MAX_ATTEMPTS,
    backoff: { baseDelayMs: config.INBOX_BACKOFF_BASE_MS, maxDelayMs: config.INBOX_BACKOFF_MAX_MS },
    relay: {
      intervalMs: config.RELAY_INTERVAL_MS,
      staleAfterMs: config.RELAY_STALE_AFTER_MS,
      processingStaleAfterMs: config.RELAY_PROCESSING_STALE_AFTER_MS,
      batchSize: config.RELAY_BATCH_SIZE,
    },
    shutdownTimeoutMs: drainTimeoutMs,
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(
    createHealthRoutes({
      registry: metrics.registry,
      beforeScrape: runtime.refreshGauges,
      checks: {
        postgres: async () => {
          await sql`SELECT 1`.execute(database.db);
        },
        redis: runtime.pingRedis,
      },
    }),
  );
  const server = await startHttpServer(app, config.WORKER_METRICS_PORT);
  logger.info(
    { metricsPort: server.port, concurrency: config.WORKER_CONCURRENCY, maxAttempts: config.INBOX_MAX_ATTEMPTS },
    'worker started',
  );
  return {
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      await runtime.stop();
      await server.close();
      await database.close();
    },
  };
});
