import {
  type AutoTopupChargeDeps,
  type AutoTopupChargeOutcome,
  claimAutoTopupAttempts,
  runAutoTopupAttempt,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { runLeasedRowsPass } from './leased-rows-pass';

export interface AutoTopupLoopOptions {
  intervalMs: number;
  batchSize: number;
  leaseMs: number;
  backoff: AutoTopupChargeDeps['backoff'];
  resolveWithinMs: number;
}

/**
 * One pass of the auto top-up loop (docs/auto-topup.md): the attempts the spends wrote, and those a
 * dead worker or an unanswered call left, each charged outside any transaction and its answer
 * recorded in one (runAutoTopupAttempt), counted by outcome.
 */
export function autoTopupPass(
  deps: Omit<AutoTopupChargeDeps, 'leaseMs' | 'backoff' | 'resolveWithinMs'> & {
    logger: Logger;
    metrics: WorkerMetrics;
  },
  options: AutoTopupLoopOptions,
): Promise<void> {
  const charge: AutoTopupChargeDeps = {
    ...deps,
    leaseMs: options.leaseMs,
    backoff: options.backoff,
    resolveWithinMs: options.resolveWithinMs,
  };
  return runLeasedRowsPass(
    {
      what: 'auto top-up attempt',
      claim: (batchSize) => claimAutoTopupAttempts(deps.db, { leaseMs: options.leaseMs, batchSize }),
      run: (attempt) => runAutoTopupAttempt(charge, attempt),
      count: (outcome) => deps.metrics.autoTopupAttempts.inc({ outcome }),
      logFields: (attempt) => ({
        attemptId: attempt.id,
        userId: attempt.user_id,
        packId: attempt.pack_id,
        tries: attempt.tries,
      }),
      quiet: ['succeeded', 'processing', 'canceled'] satisfies AutoTopupChargeOutcome[],
    },
    options.batchSize,
    deps.logger,
  );
}
