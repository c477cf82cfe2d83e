import { type AutoTopupChargeDeps, claimAutoTopupAttempts, runAutoTopupAttempt } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { WorkerMetrics } from '../metrics/worker-metrics';

export interface AutoTopupLoopOptions {
  intervalMs: number;
  batchSize: number;
  leaseMs: number;
  backoff: AutoTopupChargeDeps['backoff'];
  resolveWithinMs: number;
}

/**
 * One pass of the auto top-up loop (docs/auto-topup.md): claims the due attempts (the rows the
 * spends wrote, and those a dead worker or an unanswered call left), runs each (the charge outside
 * any transaction, its answer recorded in one), counts each outcome, and claims again while a
 * batch comes back full. Any number of replicas: the claims are leased, SKIP LOCKED.
 */
export async function autoTopupPass(
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
  for (;;) {
    const claimed = await claimAutoTopupAttempts(deps.db, { leaseMs: options.leaseMs, batchSize: options.batchSize });
    for (const attempt of claimed) {
      const startedAt = Date.now();
      const result = await runAutoTopupAttempt(charge, attempt);
      deps.metrics.autoTopupAttempts.inc({ outcome: result.outcome });
      const log = {
        attemptId: attempt.id,
        userId: attempt.user_id,
        packId: attempt.pack_id,
        tries: attempt.tries,
        outcome: result.outcome,
        code: result.code,
        durationMs: Date.now() - startedAt,
      };
      if (result.outcome === 'succeeded' || result.outcome === 'processing' || result.outcome === 'canceled') {
        deps.logger.info(log, 'auto top-up attempt');
      } else {
        deps.logger.warn(log, 'auto top-up attempt did not succeed');
      }
    }
    if (claimed.length < options.batchSize) return;
  }
}
