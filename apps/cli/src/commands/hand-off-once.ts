import type { DB, DurableRowSource } from '@tally/billing-core';
import {
  baseEnvSchema,
  createProducerQueue,
  createRedisConnection,
  type Database,
  handOffRows,
  waitUntilReady,
} from '@tally/platform';
import type { z } from 'zod';
import { describeConnectionFailure, ServerUnreachableError } from './unreachable-server';

/** What the commands that change rows and hand them to a queue read of the environment. */
export const eventsEnvSchema = baseEnvSchema.pick({ DATABASE_URL: true, REDIS_URL: true, QUEUE_PREFIX: true });

/** How long a command waits for Redis before leaving its rows to the relay. */
const REDIS_READY_TIMEOUT_MS = 3_000;

/**
 * Hands rows of `source` to their queue over a Redis connection opened only now and closed once
 * it is settled. Closing a BullMQ queue whose shared connection is still connecting lets a late
 * ready-check failure escape as an unhandled 'error' ("Stream isn't writeable"), so the queue is
 * created only on a ready connection; when Redis does not answer in time the rows are left to the
 * relay, and `queueError` says which Redis and why.
 */
export async function handOffOnce(
  env: z.output<typeof eventsEnvSchema>,
  db: Database<DB>['db'],
  source: DurableRowSource,
  ids: number[],
): Promise<{ enqueued: number; alreadyQueued: number; deferred: number; queueError?: string }> {
  const redis = createRedisConnection(env.REDIS_URL, 'producer');
  let lastRedisError: unknown;
  redis.on('error', (error) => {
    lastRedisError = error;
  });
  try {
    if (!(await waitUntilReady(redis, REDIS_READY_TIMEOUT_MS))) {
      await source.releaseHandOff(db, ids);
      const cause = lastRedisError === undefined ? 'no answer in time' : describeConnectionFailure(lastRedisError);
      const queueError = new ServerUnreachableError('redis_unreachable', 'Redis', env.REDIS_URL, cause).message;
      return { enqueued: 0, alreadyQueued: 0, deferred: ids.length, queueError };
    }
    const queue = createProducerQueue(redis, env.QUEUE_PREFIX, source.queue);
    try {
      const { enqueued, alreadyQueued, deferred } = await handOffRows(queue, source, db, ids);
      return { enqueued, alreadyQueued, deferred };
    } finally {
      await queue.close().catch(() => undefined);
    }
  } finally {
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }
}
