import {
  type BackoffSettings,
  claimGooglePlayConsumes,
  type GooglePlayApi,
  type GooglePlayConsumeDeps,
  type GooglePlayConsumeOutcome,
  runGooglePlayConsume,
  runVoidedPurchasesPass,
  type VoidedPassDeps,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { runLeasedRowsPass } from './leased-rows-pass';

export interface GooglePlayConsumeLoopOptions {
  intervalMs: number;
  batchSize: number;
  leaseMs: number;
  backoff: BackoffSettings;
}

/**
 * One pass of the google-play-consume loop (docs/stores-google-play.md): the delivered purchases
 * still to consume (each credit wrote its row; a dead worker's claim is due again after its lease),
 * each consumed outside any transaction, counted by outcome.
 */
export function googlePlayConsumePass(
  deps: Omit<GooglePlayConsumeDeps, 'leaseMs' | 'backoff'> & { logger: Logger; metrics: WorkerMetrics },
  options: GooglePlayConsumeLoopOptions,
): Promise<void> {
  const consume: GooglePlayConsumeDeps = { ...deps, leaseMs: options.leaseMs, backoff: options.backoff };
  return runLeasedRowsPass(
    {
      what: 'Google Play consume',
      claim: (batchSize) => claimGooglePlayConsumes(deps.db, { leaseMs: options.leaseMs, batchSize }),
      run: async (row) => {
        const result = await runGooglePlayConsume(consume, row);
        return { outcome: result.outcome, code: result.error };
      },
      count: (outcome) => deps.metrics.googlePlayConsumes.inc({ outcome }),
      logFields: (row) => ({ orderId: row.order_id, userId: row.user_id, tries: row.consume_tries }),
      quiet: ['consumed', 'already_consumed', 'not_purchased'] satisfies GooglePlayConsumeOutcome[],
    },
    options.batchSize,
    deps.logger,
  );
}

/**
 * One run of the google-play-voided loop: the pass over the Voided Purchases API (the last 30
 * days) under its lease, its findings counted and logged. Without the API it does nothing.
 */
export async function googlePlayVoidedPass(
  deps: Omit<VoidedPassDeps, 'googlePlay'> & {
    googlePlay: GooglePlayApi | undefined;
    logger: Logger;
    metrics: WorkerMetrics;
  },
): Promise<void> {
  if (!deps.googlePlay) return;
  let result: Awaited<ReturnType<typeof runVoidedPurchasesPass>>;
  try {
    result = await runVoidedPurchasesPass(deps);
  } catch (error) {
    deps.metrics.googlePlayVoidedPasses.inc({ outcome: 'failed' });
    throw error;
  }
  if (result.kind === 'skipped') {
    deps.metrics.googlePlayVoidedPasses.inc({ outcome: 'skipped' });
    deps.logger.info({ reason: result.reason }, 'Google Play voided purchases pass skipped');
    return;
  }
  const { report } = result;
  deps.metrics.googlePlayVoidedPasses.inc({ outcome: 'ran' });
  deps.metrics.googlePlayVoidedPassLastRun.set(Date.now() / 1000);
  deps.metrics.googlePlayVoidedFound.inc({ result: 'taken_back' }, report.takenBack);
  deps.metrics.googlePlayVoidedFound.inc({ result: 'already_taken_back' }, report.alreadyTakenBack);
  deps.metrics.googlePlayVoidedFound.inc({ result: 'not_credited' }, report.notCredited);
  deps.metrics.googlePlayVoidedFound.inc({ result: 'deferred' }, report.deferred);
  const log = { ...report, leaseLost: result.leaseLost };
  if (report.takenBack > 0)
    deps.logger.warn(log, 'Google Play voided purchases pass took back voids no notification had');
  else deps.logger.info(log, 'Google Play voided purchases pass');
}
