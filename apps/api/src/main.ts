import { createDb, exampleCatalogPath, loadCatalog } from '@tally/billing-core';
import {
  createApiMetrics,
  createInboxQueue,
  createLogger,
  createRedisConnection,
  handOffInboxEvents,
  loadDotEnv,
  parseEnv,
  runMain,
  startHttpServer,
  waitUntilReady,
} from '@tally/platform';
import { sql } from 'kysely';
import { closeApiApp, createApiApp } from './app';
import { apiEnvSchema } from './config';

// The composition root: the only place that reads process.env.
runMain('api', async () => {
  loadDotEnv();
  const config = parseEnv(apiEnvSchema, process.env);
  loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const logger = createLogger({ name: 'api', level: config.LOG_LEVEL });
  const metrics = createApiMetrics();
  const database = createDb({ connectionString: config.DATABASE_URL, applicationName: 'tally-api' });
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
    queues: { connection: redis, prefix: config.QUEUE_PREFIX },
    readiness: {
      postgres: async () => {
        await sql`SELECT 1`.execute(database.db);
      },
      redis: async () => {
        await redis.ping();
      },
    },
  });
  const server = await startHttpServer(app, config.API_PORT, {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  });
  logger.info({ port: server.port }, 'api listening');
  return {
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    stop: async () => {
      await server.close();
      await closeApiApp(app);
      await queue.close().catch(() => undefined);
      redis.disconnect();
      await database.close();
    },
  };
});
