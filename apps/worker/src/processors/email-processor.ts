import { type DB, type Mailer, queueCatalog, sendOutboxEmail, toErrorText } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { UnrecoverableError, type Worker } from 'bullmq';
import type { Kysely } from 'kysely';
import { type ConsumerOptions, createRowConsumer, delayJob, unhandledResult } from './row-consumer';

/**
 * The BullMQ consumer of the email outbox: a thin adapter over sendOutboxEmail. As with the
 * inbox, the row owns the schedule: a failed send sets next_attempt_at and the job is delayed to
 * match; a row out of attempts ends its job. Nothing here touches payments or the ledger.
 */
export function createEmailWorker(
  deps: {
    db: Kysely<DB>;
    mailer: Mailer;
    logger: Logger;
    maxAttempts: number;
    backoff: { baseDelayMs: number; maxDelayMs: number };
    /**
     * How long a row may sit in `processing` before a job may claim it again (its worker died
     * mid-send): the relay's RELAY_PROCESSING_STALE_AFTER_MS, after which the relay re-enqueues
     * it. A longer window here would turn each of those jobs away until it passed.
     */
    processingStaleAfterMs: number;
  },
  options: ConsumerOptions,
): Worker {
  const consumer = { options, logger: deps.logger, what: 'email worker' };
  return createRowConsumer(queueCatalog.email, consumer, async ({ emailId }, job, token) => {
    const result = await sendOutboxEmail(deps, emailId);
    switch (result.kind) {
      case 'sent':
      case 'skipped':
      case 'not-claimed':
        deps.logger.info({ emailId, jobId: job.id, outcome: result.kind }, 'email outbox row handled');
        return { status: result.kind };
      case 'failed': {
        const error = toErrorText(result.error);
        deps.logger.warn({ emailId, jobId: job.id, parked: result.parked, error }, 'email send failed');
        if (result.parked) throw new UnrecoverableError(`email ${emailId} failed for good: ${error}`);
        return delayJob(job, token, result.delayMs);
      }
      default:
        return unhandledResult(result);
    }
  });
}
