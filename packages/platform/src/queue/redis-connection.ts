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
