import { type SweepStudioOptions, sweepStuckStudioRequests } from '@tally/billing-core';
import type { SweepDeps } from './run-periodic';

export interface StudioSweeperOptions extends SweepStudioOptions {
  intervalMs: number;
}

/** Fails and refunds studio requests stuck in processing (their worker died), batch after batch. */
export async function sweepStudioPass(deps: SweepDeps, options: StudioSweeperOptions): Promise<void> {
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
}
