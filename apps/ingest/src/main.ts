import { type DB, exampleCatalogPath, inboxRelaySource, loadCatalog } from '@tally/billing-core';
import {
  createClientErrorReporter,
  createDb,
  createLogger,
  createProducerQueue,
  createRedisConnection,
  enqueueJobs,
  loadDotEnv,
  logProviderStatus,
  parseEnv,
  runMain,
  startHttpServer,
  waitUntilReady,
} from '@tally/platform';
import { sql } from 'kysely';
import { createIngestApp } from './app';
import { ingestEnvSchema } from './config';
import { createInboxBatcher } from './inbox-batcher';
import { createIngestMetrics } from './ingest-metrics';

// The composition root: the only place that reads process.env.
runMain('ingest', async () => {
  loadDotEnv();
  const config = parseEnv(ingestEnvSchema, process.env);
  // Ingest does not use the catalog, but a bad CATALOG_PATH should stop every process alike.
  loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const logger = createLogger({ name: 'ingest', level: config.LOG_LEVEL });
  const metrics = createIngestMetrics();
  const database = createDb<DB>({
    connectionString: config.DATABASE_URL,
    applicationName: 'tally-ingest',
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    onPreparedStatementsDisabled: (error) =>
      logger.warn(
        { err: error },
        'the database pooler cannot route prepared statements: turned off (set DATABASE_PREPARED_STATEMENTS=false)',
      ),
    // Every batch insert allowed in flight keeps its connection warm: the first webhooks after
    // a quiet spell do not pay for starting backends.
    minConnections: config.INGEST_BATCH_CONCURRENCY,
    onConnectionError: (error) =>
      logger.warn({ err: error }, 'database connection lost; webhooks answer 503 until it is back'),
  });
  const redis = createRedisConnection(config.REDIS_URL, 'producer', {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
  });
  const queue = createProducerQueue(redis, config.QUEUE_PREFIX, inboxRelaySource.queue);
  if (!(await waitUntilReady(redis, 5_000))) {
    logger.warn('Redis is not reachable yet; accepted events wait for the relay until it is');
  }

  logProviderStatus(logger, [
    {
      name: 'stripe',
      on: config.STRIPE_WEBHOOK_SECRETS.length > 0,
      whenOff: 'POST /webhooks/stripe answers 503 not_configured (set STRIPE_WEBHOOK_SECRETS)',
    },
    {
      name: 'revenuecat',
      on: config.REVENUECAT_WEBHOOK_AUTH.length > 0,
      whenOff: 'POST /webhooks/revenuecat answers 503 not_configured (set REVENUECAT_WEBHOOK_AUTH)',
    },
  ]);

  const inbox = createInboxBatcher({
    db: database.db,
    enqueueMany: (inboxEventIds) =>
      enqueueJobs(
        queue,
        inboxEventIds.map((id) => inboxRelaySource.toPayload(id)),
      ),
    logger,
    maxBatchSize: config.INGEST_BATCH_MAX_SIZE,
    maxConcurrentBatches: config.INGEST_BATCH_CONCURRENCY,
    answerDeadlineMs: config.INGEST_ANSWER_DEADLINE_MS,
  });
  const app = createIngestApp({
    inbox,
    logger,
    metrics,
    stripeWebhookSecrets: config.STRIPE_WEBHOOK_SECRETS,
    stripeToleranceSeconds: config.STRIPE_WEBHOOK_TOLERANCE_SECONDS,
    revenueCatAuthorizations: config.REVENUECAT_WEBHOOK_AUTH,
    bodyLimitBytes: config.WEBHOOK_BODY_LIMIT_BYTES,
    maxInFlight: config.INGEST_MAX_IN_FLIGHT,
    failedAuthLimit: { limit: config.WEBHOOK_FAILED_AUTH_LIMIT, windowMs: config.WEBHOOK_FAILED_AUTH_WINDOW_MS },
    readiness: {
      postgres: async () => {
        await sql`SELECT 1`.execute(database.db);
      },
    },
    informationalReadiness: {
      redis: async () => {
        await redis.ping();
      },
    },
  });
  const server = await startHttpServer(app, config.INGEST_PORT, {
    host: config.INGEST_HOST ?? config.HOST,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    onClientError: createClientErrorReporter({ counter: metrics.clientErrors, logger }),
  });
  logger.info({ host: server.host, port: server.port }, 'ingest listening');
  return {
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      await server.close();
      // Answers are sent; the hand-offs behind them finish before the queue closes.
      await inbox.drain();
      await queue.close().catch(() => undefined);
      redis.disconnect();
      await database.close();
    },
  };
});
