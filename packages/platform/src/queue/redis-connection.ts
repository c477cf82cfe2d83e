import { Redis, type RedisOptions } from 'ioredis';

export type RedisRole = 'producer' | 'worker';

/**
 * Redis connections for BullMQ. Workers block on Redis and must never give up a command
 * (`maxRetriesPerRequest: null`, as BullMQ requires). Producers sit on an HTTP request path: with
 * the offline queue disabled, an enqueue while Redis is down fails at once instead of hanging,
 * and the caller falls back on the relay.
 */
export function createRedisConnection(url: string, role: RedisRole): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 };
  const redis = new Redis(url, {
    ...options,
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
