import {
  type InboxProcessorDeps,
  inboxJobSchema,
  processInboxEvent,
  queueNames,
  toErrorText,
} from '@tally/billing-core';
import { computeBackoffDelayMs, type Logger, type Metrics } from '@tally/platform';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';

export interface InboxWorkerOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  backoff: { baseDelayMs: number; maxDelayMs: number };
}

/**
 * The BullMQ consumer of the inbox queue: a thin adapter over billing-core's processInboxEvent.
 * A parked row ends its job with UnrecoverableError (no more BullMQ retries); any other failure
 * throws so BullMQ retries with capped, jittered exponential backoff. The inbox row, not the
 * job, counts attempts: a row re-enqueued by the relay keeps its history.
 */
export function createInboxWorker(
  deps: InboxProcessorDeps & { logger: Logger; metrics: Metrics },
  options: InboxWorkerOptions,
): Worker {
  const processor = async (job: Job) => {
    const { inboxEventId } = inboxJobSchema.parse(job.data);
    const startedAt = process.hrtime.bigint();
    const result = await processInboxEvent(deps, inboxEventId);
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    const log = {
      inboxEventId,
      jobId: job.id,
      jobAttempt: job.attemptsMade + 1,
      durationMs: Math.round(seconds * 1000),
    };
    switch (result.kind) {
      case 'processed':
      case 'ignored': {
        const { row } = result;
        deps.metrics.inboxProcessingDuration.observe(
          { provider: row.provider, type: row.type, outcome: result.kind },
          seconds,
        );
        deps.logger.info(
          {
            ...log,
            provider: row.provider,
            providerEventId: row.provider_event_id,
            type: row.type,
            userId: row.user_id,
            providerPaymentIntentId: row.provider_payment_intent_id,
            providerSubscriptionId: row.provider_subscription_id,
            outcome: result.kind,
            detail: result.outcome,
          },
          'inbox event finished',
        );
        return { status: result.kind, outcome: result.outcome };
      }
      case 'skipped':
        deps.logger.info({ ...log, status: result.status }, 'inbox event already finished; nothing to do');
        return { status: 'skipped', rowStatus: result.status };
      case 'not-found':
        throw new UnrecoverableError(`inbox event ${inboxEventId} does not exist`);
      case 'failed': {
        const message = toErrorText(result.error);
        deps.logger.warn(
          {
            ...log,
            provider: result.provider,
            type: result.type,
            attempts: result.attempts,
            parked: result.parked,
            error: message,
          },
          'inbox event failed',
        );
        if (result.parked) {
          deps.metrics.inboxParked.inc({ provider: result.provider, type: result.type });
          throw new UnrecoverableError(`parked after ${result.attempts} attempts: ${message}`);
        }
        throw new Error(message);
      }
      default: {
        const exhaustive: never = result;
        throw new Error(`unhandled result ${JSON.stringify(exhaustive)}`);
      }
    }
  };

  const worker = new Worker(queueNames.inbox, processor, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    settings: { backoffStrategy: (attemptsMade: number) => computeBackoffDelayMs(attemptsMade, options.backoff) },
  });
  worker.on('error', (error) => deps.logger.error({ err: error }, 'inbox worker error'));
  return worker;
}
