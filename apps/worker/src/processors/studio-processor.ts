import { processStudioRequest, queueCatalog, type StudioProcessorDeps } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { UnrecoverableError, type Worker } from 'bullmq';
import { type ConsumerOptions, createRowConsumer, delayJob, unhandledResult } from './row-consumer';

/**
 * The BullMQ consumer of the studio queue: a thin adapter over billing-core's
 * processStudioRequest. The row owns the schedule: a retry (AI service unreachable) delays the
 * job to the row's next attempt. Only a database error is thrown to BullMQ; a request left in
 * processing by it is settled by the sweeper, never run twice.
 */
export function createStudioWorker(deps: StudioProcessorDeps & { logger: Logger }, options: ConsumerOptions): Worker {
  const consumer = { options, logger: deps.logger, what: 'studio worker' };
  return createRowConsumer(queueCatalog.studio, consumer, async ({ studioRequestId }, job, token) => {
    const startedAt = Date.now();
    const result = await processStudioRequest(deps, studioRequestId);
    const log = { studioRequestId, jobId: job.id, durationMs: Date.now() - startedAt };
    switch (result.kind) {
      case 'completed': {
        const { request } = result;
        deps.logger.info(
          { ...log, requestId: request.public_id, userId: request.user_id, kind: request.kind, outcome: 'completed' },
          'studio request completed',
        );
        return { status: 'completed' };
      }
      case 'failed': {
        const { request } = result;
        deps.logger.warn(
          {
            ...log,
            requestId: request.public_id,
            userId: request.user_id,
            outcome: 'failed',
            code: result.code,
            refund: result.refund,
            error: request.error,
          },
          'studio request failed',
        );
        return { status: 'failed', code: result.code, refund: result.refund };
      }
      case 'retry': {
        deps.logger.warn(
          { ...log, requestId: result.request.public_id, code: result.code, delayMs: result.delayMs },
          'AI service unreachable; studio request retried later',
        );
        return delayJob(job, token, result.delayMs);
      }
      case 'discarded':
        deps.logger.warn(
          { ...log, requestId: result.request.public_id, status: result.status },
          'studio request was settled by another run (sweeper) while the AI call ran; its outcome was discarded',
        );
        return { status: 'discarded', rowStatus: result.status };
      case 'skipped':
        deps.logger.info({ ...log, status: result.status }, 'studio request not claimable; nothing to do');
        return { status: 'skipped', rowStatus: result.status };
      case 'not-found':
        throw new UnrecoverableError(`studio request ${studioRequestId} does not exist`);
      default:
        return unhandledResult(result);
    }
  });
}
