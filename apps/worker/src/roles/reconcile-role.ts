import { inboxRelaySource } from '@tally/billing-core';
import { handOffRows } from '@tally/platform';
import { startReconcileLoop } from '../loops/reconcile-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `reconcile` (opt-in): Stripe reconciliation on a schedule; backfilled events go to the inbox queue. */
export const reconcileRole: WorkerRoleDefinition = {
  metricFamilies: ['reconcile'],
  optIn: true,
  start({ db, logger, metrics, settings, ports, producerQueue }) {
    const inboxQueue = producerQueue(inboxRelaySource.queue);
    return loopHandle(
      startReconcileLoop(
        {
          db,
          stripe: ports.stripe,
          enqueue: (ids) => handOffRows(inboxQueue, inboxRelaySource, db, ids),
          logger,
          onReport: (report) => metrics.recordReconciliation(report),
        },
        settings.reconcile,
      ),
    );
  },
};
