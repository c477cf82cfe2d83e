import { claimStrandedInboxEvents, type DB } from '@tally/billing-core';
import { handOffInboxEvents, type InboxQueue, type Logger, type Metrics } from '@tally/platform';
import type { Kysely } from 'kysely';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface RelayOptions {
  intervalMs: number;
  staleAfterMs: number;
  processingStaleAfterMs: number;
  batchSize: number;
}

/**
 * Postgres is the system of record and Redis only delivers: this loop finds inbox rows that need
 * work but may have no job (hand-off failed, Redis flushed or restarted, a worker died) and
 * enqueues them again. When Redis is still down, the claimed rows are released for the next tick.
 */
export function startRelayLoop(
  deps: { db: Kysely<DB>; queue: InboxQueue; logger: Logger; metrics: Metrics },
  options: RelayOptions,
): PeriodicLoop {
  return runPeriodic(
    'relay',
    options.intervalMs,
    async () => {
      for (;;) {
        const ids = await claimStrandedInboxEvents(deps.db, options);
        if (ids.length === 0) return;
        const delivery = await handOffInboxEvents(deps.queue, deps.db, ids);
        deps.metrics.relayReenqueued.inc(delivery.enqueued);
        if (delivery.enqueued > 0) {
          deps.logger.info({ count: delivery.enqueued, firstId: ids[0] }, 'relay re-enqueued events');
        }
        if (delivery.deferred > 0) {
          deps.logger.warn(
            { err: delivery.error, deferred: delivery.deferred },
            'relay cannot reach the queue; will retry',
          );
          return;
        }
        if (ids.length < options.batchSize) return;
      }
    },
    deps.logger,
  );
}
