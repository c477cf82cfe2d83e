import { inboxRelaySource } from '@tally/billing-core';
import { handOffRows } from '@tally/platform';
import { startAppleReconcileLoop } from '../loops/apple-reconcile-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `apple-reconcile` (opt-in): Apple's notification history against the inbox, on a schedule; what it records goes to the inbox queue. */
export const appleReconcileRole: WorkerRoleDefinition = {
  metricFamilies: ['appleReconcile'],
  optIn: true,
  start({ db, logger, metrics, settings, ports, producerQueue }) {
    const inboxQueue = producerQueue(inboxRelaySource.queue);
    return loopHandle(
      startAppleReconcileLoop(
        {
          db,
          appStore: ports.appStore,
          verify: ports.appleNotifications,
          enqueue: (ids) => handOffRows(inboxQueue, inboxRelaySource, db, ids),
          logger,
          onReport: (report) => metrics.recordAppleReconciliation(report),
        },
        settings.appleReconcile,
      ),
    );
  },
};
