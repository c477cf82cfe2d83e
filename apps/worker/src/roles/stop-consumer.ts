import type { Logger } from '@tally/platform';
import { withTimeout } from '@tally/platform';
import type { Worker } from 'bullmq';
import type { RoleHandle } from './worker-role';

/** How long a consumer still starting is given to finish before it is closed anyway. */
const START_SETTLE_MS = 1_000;

/**
 * The handle of a BullMQ consumer: stop() waits for its active jobs up to drainTimeoutMs, then
 * closes it by force (worker.close() waits with no limit and can hang while Redis is down); the
 * unfinished jobs are retried by another worker. A consumer stopped right after it started is
 * first given START_SETTLE_MS to finish starting, as closeProducerQueues does for queues: BullMQ's
 * close drops its connections' error listeners without waiting for their start-up, whose failure
 * on the closed connection would then crash the process.
 */
export function consumerHandle(worker: Worker, drainTimeoutMs: number, logger: Logger): RoleHandle {
  return {
    async stop() {
      await withTimeout(worker.waitUntilReady(), START_SETTLE_MS, 'worker start-up').catch(() => undefined);
      try {
        await withTimeout(worker.close(), drainTimeoutMs, 'worker did not drain in time');
      } catch (error) {
        logger.warn({ err: error, queue: worker.name }, 'forcing the worker closed; unfinished jobs will be retried');
        await worker.close(true).catch(() => undefined);
      }
    },
  };
}
