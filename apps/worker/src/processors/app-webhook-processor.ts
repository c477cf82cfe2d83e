import {
  type DeliverAppWebhookDeps,
  type DeliverAppWebhookResult,
  deliverAppWebhookMessage,
  isAppWebhookMessageBlocked,
  queueCatalog,
} from '@tally/billing-core';
import { enqueueJob, type Logger, type ProducerQueue } from '@tally/platform';
import { DelayedError, type Job, type Worker } from 'bullmq';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { type ConsumerOptions, createRowConsumer, delayJob, unhandledResult } from './row-consumer';

export interface AppWebhookWorkerDeps extends DeliverAppWebhookDeps {
  /** The app-webhooks queue, to wake a user's next message when one finishes. */
  queue: ProducerQueue<{ appWebhookMessageId: number }>;
  logger: Logger;
  metrics: WorkerMetrics;
}

/**
 * The BullMQ consumer of app webhook messages: a thin adapter over deliverAppWebhookMessage. The
 * row owns the schedule: a failed attempt sets next_attempt_at and the job is delayed to match; a
 * message blocked behind an earlier one of its user is delayed too, and woken when that one
 * finishes. A failed message ends its job normally (the row says `failed`; a redeliver starts
 * it again). Logs ids, type, status code and outcome, never the body or the answer's body.
 */
export function createAppWebhookWorker(deps: AppWebhookWorkerDeps, options: ConsumerOptions): Worker {
  const consumer = { options, logger: deps.logger, what: 'app webhook worker' };
  return createRowConsumer(queueCatalog.appWebhooks, consumer, async ({ appWebhookMessageId }, job, token) => {
    const result = await deliverAppWebhookMessage(deps, appWebhookMessageId);
    record(deps, result, job);
    switch (result.kind) {
      case 'delivered':
      case 'failed':
        if (result.nextOfUser !== undefined) await wake(deps, result.nextOfUser);
        return { status: result.kind };
      case 'not-claimed':
        return { status: result.kind };
      case 'retry':
      case 'not-due':
        return delayJob(job, token, result.delayMs);
      case 'blocked':
        await job.moveToDelayed(Date.now() + result.delayMs, token);
        // The predecessor may have finished since the claim looked: its wake-up then found this
        // job active, not delayed, and left it. Parked first, asked second, so one of the two
        // always sees the other: a finished predecessor never leaves this message waiting out
        // its delay.
        // guard: app-webhook-blocked-recheck
        if (!(await isAppWebhookMessageBlocked(deps.db, appWebhookMessageId))) {
          await job.promote().catch(() => undefined);
        }
        throw new DelayedError();
      default:
        return unhandledResult(result);
    }
  });
}

function record(deps: AppWebhookWorkerDeps, result: DeliverAppWebhookResult, job: Job): void {
  switch (result.kind) {
    case 'delivered':
      deps.metrics.appWebhookAttempts.inc({ outcome: 'delivered' });
      deps.metrics.appWebhookDelivered.inc({ type: result.message.type });
      deps.logger.info(
        {
          appWebhookMessageId: result.message.id,
          type: result.message.type,
          userId: result.message.user_id,
          attempt: result.message.attempts,
          statusCode: result.statusCode,
          jobId: job.id,
        },
        'app webhook delivered',
      );
      return;
    case 'retry':
    case 'failed':
      deps.metrics.appWebhookAttempts.inc({
        outcome: result.message.last_status_code === null ? 'unreachable' : 'rejected',
      });
      if (result.kind === 'failed') deps.metrics.appWebhookFailed.inc({ type: result.message.type });
      deps.logger.warn(
        {
          appWebhookMessageId: result.message.id,
          type: result.message.type,
          userId: result.message.user_id,
          attempt: result.message.attempts,
          statusCode: result.message.last_status_code,
          jobId: job.id,
          outcome: result.kind,
          ...(result.kind === 'retry' ? { retryInMs: result.delayMs } : {}),
        },
        result.kind === 'failed' ? 'app webhook failed for good' : 'app webhook attempt failed; will retry',
      );
      return;
    default:
      return;
  }
}

/**
 * Wakes the user's next message now that the one before it finished: promotes its delayed job
 * (blocked messages wait delayed), or hands it off when its job is gone. A failure here costs
 * only latency: the blocked job re-checks on its own, and the relay hands off lost rows.
 */
async function wake(deps: AppWebhookWorkerDeps, appWebhookMessageId: number): Promise<void> {
  try {
    const job = await deps.queue.getJob(queueCatalog.appWebhooks.jobId({ appWebhookMessageId }));
    if (job && (await job.isDelayed())) {
      await job.promote();
      return;
    }
    await enqueueJob(deps.queue, { appWebhookMessageId }, { replaceFinished: true });
  } catch (error) {
    deps.logger.warn({ err: error, appWebhookMessageId }, 'could not wake the next app webhook of the user');
  }
}
