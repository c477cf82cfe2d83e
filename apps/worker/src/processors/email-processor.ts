import { type DB, type Mailer, queueCatalog, sendOutboxEmail, toErrorText } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { logWorkerErrors } from './worker-errors';

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
  options: {
    connection: Redis;
    prefix: string;
    concurrency: number;
    /** BullMQ lock (and stalled check) for the job, as for the inbox and studio consumers. */
    lockDurationMs: number;
  },
): Worker {
  const processor = async (job: Job, token?: string) => {
    const { emailId } = queueCatalog.email.payload.parse(job.data);
    const result = await sendOutboxEmail(
      {
        db: deps.db,
        mailer: deps.mailer,
        maxAttempts: deps.maxAttempts,
        backoff: deps.backoff,
        processingStaleAfterMs: deps.processingStaleAfterMs,
      },
      emailId,
    );
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
        await job.moveToDelayed(Date.now() + result.delayMs, token);
        throw new DelayedError();
      }
      default: {
        const exhaustive: never = result;
        throw new Error(`unhandled result ${JSON.stringify(exhaustive)}`);
      }
    }
  };
  const worker = new Worker(queueCatalog.email.name, processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    // A worker killed mid-send leaves its job active until the lock expires and the stalled check
    // runs; without the configured lock that took BullMQ's default (about a minute).
    lockDuration: options.lockDurationMs,
    stalledInterval: options.lockDurationMs,
  });
  logWorkerErrors(worker, deps.logger, 'email worker');
  return worker;
}
