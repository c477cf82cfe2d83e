import {
  type AppleConsumptionDeps,
  type AppleConsumptionOutcome,
  answerAppleConsumptionRequest,
  type BackoffSettings,
  claimAppleConsumptionRequests,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { runLeasedRowsPass } from './leased-rows-pass';

export interface AppleConsumptionLoopOptions {
  intervalMs: number;
  batchSize: number;
  leaseMs: number;
  backoff: BackoffSettings;
}

/**
 * One pass of the apple-consumption loop (docs/stores-apple.md): the consumption requests
 * CONSUMPTION_REQUEST notifications recorded, and those a dead worker or an unanswered call left,
 * each answered outside any transaction, counted by outcome.
 */
export function appleConsumptionPass(
  deps: Omit<AppleConsumptionDeps, 'leaseMs' | 'backoff'> & { logger: Logger; metrics: WorkerMetrics },
  options: AppleConsumptionLoopOptions,
): Promise<void> {
  const answer: AppleConsumptionDeps = { ...deps, leaseMs: options.leaseMs, backoff: options.backoff };
  return runLeasedRowsPass(
    {
      what: 'App Store consumption request',
      claim: (batchSize) => claimAppleConsumptionRequests(deps.db, { leaseMs: options.leaseMs, batchSize }),
      run: (request) => answerAppleConsumptionRequest(answer, request),
      count: (outcome) => deps.metrics.appleConsumptionRequests.inc({ outcome }),
      logFields: (request) => ({
        consumptionRequestId: request.id,
        transactionId: request.transaction_id,
        userId: request.user_id,
        tries: request.tries,
      }),
      quiet: ['sent', 'no_consent', 'finished_elsewhere'] satisfies AppleConsumptionOutcome[],
    },
    options.batchSize,
    deps.logger,
  );
}
