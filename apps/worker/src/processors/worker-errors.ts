import type { Logger } from '@tally/platform';
import type { Worker } from 'bullmq';

/**
 * BullMQ's messages for a job whose lock this worker lost (it stalled: the process was paused
 * or starved past the lock duration, and another worker took the job over). Expected under
 * such faults and harmless here: the durable row, not the job, decides what runs, and the
 * takeover re-checks it under its lock.
 */
const lostLockMessages = [/could not renew lock for job/i, /missing lock for job/i, /lock mismatch for job/i];

export function isLostJobLockError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return lostLockMessages.some((pattern) => pattern.test(message));
}

/**
 * Logs a consumer's errors: a lost job lock as a warning (see above), anything else (Redis down,
 * a bug) as an error, so error-level alerts fire on real trouble only.
 */
export function logWorkerErrors(worker: Worker, logger: Logger, what: string): void {
  worker.on('error', (error) => {
    if (isLostJobLockError(error)) {
      logger.warn({ err: error, queue: worker.name }, `${what}: job lock lost to another worker; the row decides`);
    } else {
      logger.error({ err: error }, `${what} error`);
    }
  });
}
