import type { DB, DurableRowSource, RelayClaimOptions } from '@tally/billing-core';
import { handOffRows, type Logger, type ProducerQueue } from '@tally/platform';
import type { Kysely } from 'kysely';
import type { WorkerMetrics } from '../metrics/worker-metrics';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface RelayOptions extends RelayClaimOptions {
  intervalMs: number;
}

/** A durable-row table and the producer handle of its queue. */
export interface RelayRoute<Payload = unknown> {
  source: DurableRowSource<Payload>;
  queue: ProducerQueue<Payload>;
}

/**
 * Postgres is the system of record and Redis only delivers: this one loop serves every durable
 * row table (the inbox, the outboxes) and hands rows that need work but may have no job (hand-off
 * failed, Redis flushed or restarted, a worker died) to their queue again. Only jobs that were
 * really missing are counted. When Redis is still down, claimed rows are released for next time.
 */
export function startRelayLoop(
  deps: { db: Kysely<DB>; routes: readonly RelayRoute[]; logger: Logger; metrics: WorkerMetrics },
  options: RelayOptions,
): PeriodicLoop {
  const relayOne = async ({ source, queue }: RelayRoute): Promise<void> => {
    for (;;) {
      const ids = await source.claimStranded(deps.db, options);
      if (ids.length === 0) return;
      const delivery = await handOffRows(queue, source, deps.db, ids);
      deps.metrics.relayReenqueued.inc({ source: source.name }, delivery.enqueued);
      if (delivery.enqueued > 0) {
        deps.logger.info(
          { source: source.name, count: delivery.enqueued, alreadyQueued: delivery.alreadyQueued, firstId: ids[0] },
          'relay re-enqueued rows whose job was missing',
        );
      }
      if (delivery.deferred > 0) {
        deps.logger.warn(
          { source: source.name, err: delivery.error, deferred: delivery.deferred },
          'relay cannot reach the queue; will retry',
        );
        return;
      }
      // A full batch whose every job was still queued is a backlog the workers are draining, not
      // stranded rows: stop this pass instead of walking (and re-stamping) the whole backlog.
      if (delivery.enqueued === 0) return;
      if (ids.length < options.batchSize) return;
    }
  };
  return runPeriodic(
    'relay',
    options.intervalMs,
    async () => {
      for (const route of deps.routes) await relayOne(route);
    },
    deps.logger,
  );
}
