import {
  type DB,
  findOldestDueAgeSeconds,
  type LedgerTotalsReader,
  readAppWebhookGauges,
  readOperationalCounts,
} from '@tally/billing-core';
import { type ProducerQueue, readQueueDepths } from '@tally/platform';
import type { Kysely } from 'kysely';
import type { WorkerMetrics } from './worker-metrics';

/**
 * Sets the `system` family (queue depth of every catalog queue, the oldest due inbox event, ledger
 * totals, parked rows, studio and installment states, the app webhook backlog) from Redis and
 * Postgres; called before a metrics scrape by the one role that exports them (the relay).
 */
export async function refreshSystemGauges(
  queues: readonly ProducerQueue<unknown>[],
  db: Kysely<DB>,
  metrics: WorkerMetrics,
  /** The process's one reader: it keeps the settled part of the ledger totals between scrapes. */
  ledgerTotals: LedgerTotalsReader,
): Promise<void> {
  for (const { queue, counts } of await readQueueDepths(queues)) {
    for (const [state, count] of Object.entries(counts)) metrics.queueJobs.set({ queue, state }, count);
  }
  metrics.oldestPendingAge.set(await findOldestDueAgeSeconds(db));
  metrics.setOperationalCounts(await readOperationalCounts(db, ledgerTotals));
  const appWebhooks = await readAppWebhookGauges(db);
  metrics.appWebhookOldestPendingAge.set(appWebhooks.oldestPendingAgeSeconds);
  metrics.appWebhookMessages.set({ status: 'pending' }, appWebhooks.pending);
  metrics.appWebhookMessages.set({ status: 'failed' }, appWebhooks.failed);
}
