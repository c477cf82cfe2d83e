import type { Logger } from '@tally/platform';
import { withTimeout } from '@tally/platform';
import type { Worker } from 'bullmq';
import type { RoleHandle } from './worker-role';

/**
 * The handle of a BullMQ consumer: stop() waits for its active jobs up to drainTimeoutMs, then
 * closes it by force (worker.close() waits with no limit and can hang while Redis is down); the
 * unfinished jobs are retried by another worker.
 */
export function consumerHandle(worker: Worker, drainTimeoutMs: number, logger: Logger): RoleHandle {
  return {
    async stop() {
      try {
        await withTimeout(worker.close(), drainTimeoutMs, 'worker did not drain in time');
      } catch (error) {
        logger.warn({ err: error, queue: worker.name }, 'forcing the worker closed; unfinished jobs will be retried');
        await worker.close(true).catch(() => undefined);
      }
    },
  };
}
