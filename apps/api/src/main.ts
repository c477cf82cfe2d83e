import { createDb, exampleCatalogPath, loadCatalog } from '@tally/billing-core';
import {
  createInboxQueue,
  createLogger,
  createMetrics,
  createRedisConnection,
  handOffInboxEvents,
  loadDotEnv,
  parseEnv,
  refreshInboxGauges,
  runMain,
  startHttpServer,
  waitUntilReady,
} from '@tally/platform';
import { sql } from 'kysely';
import { createApiApp } from './app';
import { apiEnvSchema } from './config';

// The composition root: the only place that reads process.env.
runMain('api', async () => {
  loadDotEnv();
  const config = parseEnv(apiEnvSchema, process.env);
  loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const logger = createLogger({ name: 'api', level: config.LOG_LEVEL });
  const metrics = createMetrics('api');
  const database = createDb({
    connectionString: config.DATABASE_URL,
    applicationName: 'tally-api',
    onConnectionError: (error) =>
      logger.warn({ err: error }, 'database connection lost; requests answer 503 until it is back'),
  });
  const redis = createRedisConnection(config.REDIS_URL, 'producer');
  const queue = createInboxQueue(redis, config.QUEUE_PREFIX);
  if (!(await waitUntilReady(redis, 5_000))) {
    logger.warn('Redis is not reachable yet; accepted events wait for the relay until it is');
  }

  const app = createApiApp({
    db: database.db,
    logger,
    metrics,
    appApiKeys: config.APP_API_KEYS,
    adminApiKeys: config.ADMIN_API_KEYS,
    enqueue: (ids) => handOffInboxEvents(queue, database.db, ids),
    readiness: {
      postgres: async () => {
        await sql`SELECT 1`.execute(database.db);
      },
      redis: async () => {
        await redis.ping();
      },
    },
    beforeScrape: () => refreshInboxGauges(queue, database.db, metrics),
  });
  const server = await startHttpServer(app, config.API_PORT);
  logger.info({ port: server.port }, 'api listening');
  return {
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      await server.close();
      await queue.close().catch(() => undefined);
      redis.disconnect();
      await database.close();
    },
  };
});
