import {
  type AppleConsumptionDeps,
  answerAppleConsumptionRequest,
  type BackoffSettings,
  claimAppleConsumptionRequests,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { WorkerMetrics } from '../metrics/worker-metrics';

export interface AppleConsumptionLoopOptions {
  intervalMs: number;
  batchSize: number;
  leaseMs: number;
  backoff: BackoffSettings;
}

/**
 * One pass of the apple-consumption loop (docs/stores-apple.md): claims the due consumption
 * requests (the rows CONSUMPTION_REQUEST notifications wrote, and those a dead worker or an
 * unanswered call left), answers each outside any transaction, counts each outcome, and claims
 * again while a batch comes back full. Any number of replicas: the claims are leased, SKIP LOCKED.
 */
export async function appleConsumptionPass(
  deps: Omit<AppleConsumptionDeps, 'leaseMs' | 'backoff'> & { logger: Logger; metrics: WorkerMetrics },
  options: AppleConsumptionLoopOptions,
): Promise<void> {
  const answer: AppleConsumptionDeps = { ...deps, leaseMs: options.leaseMs, backoff: options.backoff };
  for (;;) {
    const claimed = await claimAppleConsumptionRequests(deps.db, {
      leaseMs: options.leaseMs,
      batchSize: options.batchSize,
    });
    for (const request of claimed) {
      const result = await answerAppleConsumptionRequest(answer, request);
      deps.metrics.appleConsumptionRequests.inc({ outcome: result.outcome });
      const log = {
        consumptionRequestId: request.id,
        transactionId: request.transaction_id,
        userId: request.user_id,
        tries: request.tries,
        outcome: result.outcome,
        code: result.code,
      };
      if (result.outcome === 'rejected' || result.outcome === 'expired' || result.outcome === 'retry') {
        deps.logger.warn(log, 'App Store consumption request not answered');
      } else {
        deps.logger.info(log, 'App Store consumption request');
      }
    }
    if (claimed.length < options.batchSize) return;
  }
}
