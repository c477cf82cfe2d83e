import { Redis, type RedisOptions } from 'ioredis';

export type RedisRole = 'producer' | 'worker';

/** REDIS_COMMAND_TIMEOUT_MS's default: a producer's command not answered by then fails. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 2_000;
/** A producer's connection attempt fails after this (the caller falls back on the relay). */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/**
 * TCP keepalive on every Redis connection, first probe after this long idle: a connection whose
 * peer vanished is found out while it sits idle (a worker's blocking connection included).
 */
export const REDIS_KEEPALIVE_IDLE_MS = 10_000;

/**
 * Redis connections for BullMQ. Workers block on Redis and must never give up a command
 * (`maxRetriesPerRequest: null`, as BullMQ requires; a command timeout would cut its blocking
 * waits). Producers sit on an HTTP request path: with the offline queue disabled, an enqueue while
 * Redis is down fails at once instead of hanging, an enqueue over a silent path (a partition)
 * fails after `commandTimeoutMs` (REDIS_COMMAND_TIMEOUT_MS), and the caller falls back on the relay.
 */
export function createRedisConnection(
  url: string,
  role: RedisRole,
  settings: { commandTimeoutMs?: number } = {},
): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
          // guard: redis-command-timeout
          commandTimeout: settings.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
        };
  const redis = new Redis(url, {
    ...options,
    keepAlive: REDIS_KEEPALIVE_IDLE_MS,
    lazyConnect: false,
    // Reconnect forever with a capped delay: Redis coming back must heal every process.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  // Connection errors are reported through readiness and metrics; an unhandled 'error' event
  // would crash the process.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Waits until the connection is ready, or `timeoutMs` passes (then resolves false). Producers
 * call this at start-up so the first webhooks are not sent to the relay only because the
 * connection was still being opened; a Redis that is down at start-up only delays the start.
 */
export function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
