import { type SweepStudioOptions, sweepStuckStudioRequests, type UnitOfWorkDeps } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface StudioSweeperOptions extends SweepStudioOptions {
  intervalMs: number;
}

/** Every intervalMs: fail and refund studio requests stuck in processing (their worker died). */
export function startStudioSweeperLoop(
  deps: UnitOfWorkDeps & { logger: Logger },
  options: StudioSweeperOptions,
): PeriodicLoop {
  return runPeriodic(
    'studio-sweeper',
    options.intervalMs,
    async () => {
      for (;;) {
        const swept = await sweepStuckStudioRequests(deps, options);
        for (const request of swept) {
          deps.logger.warn(
            { studioRequestId: request.id, requestId: request.publicId, refund: request.refund },
            'studio request stuck in processing: failed and refunded',
          );
        }
        if (swept.length < options.batchSize) return;
      }
    },
    deps.logger,
  );
}
