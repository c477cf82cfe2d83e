import type { ProducerQueue } from './queues';

export const queueDepthStates = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
export type QueueDepthState = (typeof queueDepthStates)[number];

/**
 * Jobs by state in each queue, one `getJobCounts` per queue: what the worker's `tally_queue_jobs`
 * gauge exports at scrape time and the api's console overview shows.
 */
export async function readQueueDepths(
  queues: readonly ProducerQueue<unknown>[],
): Promise<{ queue: string; counts: Record<QueueDepthState, number> }[]> {
  const depths = [];
  for (const queue of queues) {
    const counts = await queue.getJobCounts(...queueDepthStates);
    depths.push({
      queue: queue.name,
      counts: Object.fromEntries(queueDepthStates.map((state) => [state, counts[state] ?? 0])) as Record<
        QueueDepthState,
        number
      >,
    });
  }
  return depths;
}
