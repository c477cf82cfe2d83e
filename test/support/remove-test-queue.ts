import { inboxRelaySource } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { createProducerQueue, createRedisConnection, type QueueDefinition, waitUntilReady } from '@tally/platform';

/**
 * Removes a test run's queue (`definition` under `prefix`, the inbox's by default) from the shared
 * Redis, which keeps finished jobs for days. A Redis that is not ready within 5 s is left alone.
 */
export async function removeTestQueue<Payload>(
  prefix: string,
  definition: QueueDefinition<Payload> = inboxRelaySource.queue as QueueDefinition<never>,
): Promise<void> {
  const redis = createRedisConnection(testRedisUrl(), 'producer');
  if (!(await waitUntilReady(redis, 5_000))) {
    redis.disconnect();
    return;
  }
  const queue = createProducerQueue(redis, prefix, definition);
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await redis.quit();
}
