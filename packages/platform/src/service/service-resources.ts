import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { baseEnvSchema } from '../config/env';
import { type CreateDbOptions, createDb, type Database } from '../db/create-db';
import { type ClientErrorCounter, createClientErrorReporter } from '../http/client-errors';
import { type RunningServer, startHttpServer } from '../http/start-http-server';
import { createRedisConnection, waitUntilReady } from '../queue/redis-connection';

// What the services' composition roots (ingest, api, worker) build alike from the settings every
// process shares (baseEnvSchema), so a setting reaches all three the same way.

/** The settings every process shares, parsed. */
export type BaseEnv = z.output<typeof baseEnvSchema>;

/**
 * A service's Postgres pool (application name `tally-<name>`), with the shared database settings.
 * Logs, as a warning, a pooler that cannot route prepared statements and each lost connection,
 * saying what `whileDown` the service does until it is back.
 */
export function createServiceDb<DB>(
  config: BaseEnv,
  logger: Logger,
  service: { name: string; whileDown: string } & Pick<CreateDbOptions, 'maxConnections' | 'minConnections'>,
): Database<DB> {
  const { name, whileDown, ...pool } = service;
  return createDb<DB>({
    connectionString: config.DATABASE_URL,
    applicationName: `tally-${name}`,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    onPreparedStatementsDisabled: (error) =>
      logger.warn(
        { err: error },
        'the database pooler cannot route prepared statements: turned off (set DATABASE_PREPARED_STATEMENTS=false)',
      ),
    ...pool,
    onConnectionError: (error) =>
      logger.warn({ err: error }, `database connection lost; ${whileDown} until it is back`),
  });
}

/** A readiness check of Redis: it answers a PING. */
export function redisCheck(redis: Redis): () => Promise<void> {
  return async () => {
    await redis.ping();
  };
}

/** A readiness check of the database: it answers a statement. */
export function postgresCheck<DB>(db: Kysely<DB>): () => Promise<void> {
  return async () => {
    await sql`SELECT 1`.execute(db);
  };
}

/**
 * A producer's Redis connection (createRedisConnection), given up to 5 s to be ready so the first
 * hand-offs do not go to the relay only because it was still opening; a Redis still down then
 * is logged, and only delays the hand-offs (the relay delivers meanwhile).
 */
export async function connectProducerRedis(config: BaseEnv, logger: Logger): Promise<Redis> {
  const redis = createRedisConnection(config.REDIS_URL, 'producer', {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
  });
  if (!(await waitUntilReady(redis, 5_000))) {
    logger.warn('Redis is not reachable yet; accepted events wait for the relay until it is');
  }
  return redis;
}

/**
 * Starts a service's HTTP server on its port and interface (its own host setting, else `HOST`),
 * with the shared HTTP timeouts; Node's early answers are counted and logged.
 */
export function startServiceServer(
  app: Express,
  config: BaseEnv & { HOST: string },
  listen: { port: number; host: string | undefined },
  report: { clientErrors: ClientErrorCounter; logger: Logger },
): Promise<RunningServer> {
  return startHttpServer(app, listen.port, {
    host: listen.host ?? config.HOST,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    onClientError: createClientErrorReporter({ counter: report.clientErrors, logger: report.logger }),
  });
}
