import {
  installmentStatuses,
  knownLedgerReasons,
  metricEventTypes,
  type OperationalCounts,
  type StripeReconciliationReport,
  studioRequestStatuses,
} from '@tally/billing-core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

const providers = ['stripe', 'revenuecat'] as const;

/**
 * One registry per process with Node's defaults. Each process adds only the families it moves,
 * so a dashboard never shows a flat line from a process that cannot change it; labelled counters
 * start at zero for every known label so alerts see them before their first increment.
 */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'tally_' });
  return registry;
}

export const webhookOutcomes = [
  'accepted',
  'duplicate',
  'bad_signature',
  'unauthorized',
  'bad_request',
  'unsupported_media_type',
  'too_large',
  'aborted',
  'unavailable',
  'error',
] as const;

/** Ingest: webhook answers by provider and outcome. */
export function createIngestMetrics() {
  const registry = createRegistry('ingest');
  const webhookRequests = new Counter({
    name: 'tally_webhook_requests_total',
    help: 'Webhook requests by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    registers: [registry],
  });
  for (const provider of providers)
    for (const outcome of webhookOutcomes) webhookRequests.inc({ provider, outcome }, 0);
  return { registry, webhookRequests };
}
export type IngestMetrics = ReturnType<typeof createIngestMetrics>;

export const reconcileFindingKinds = ['missing_events', 'events_without_rows', 'ledger_rows_without_event'] as const;

/** Parking reasons that have their own zero-initialised series (others appear on first use). */
export const parkedCodes = [
  'attempts_exhausted',
  'invalid_event',
  'reference_conflict',
  'not_configured',
  'waited_too_long',
] as const;

/** Worker: processing, parking, waiting, conflicts, relay and the queue/backlog gauges. */
export function createWorkerMetrics() {
  const registry = createRegistry('worker');
  const metrics = {
    registry,
    inboxProcessingDuration: new Histogram({
      name: 'tally_inbox_processing_duration_seconds',
      help: 'Time to process one inbox event, by provider, type and outcome',
      labelNames: ['provider', 'type', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    inboxParked: new Counter({
      name: 'tally_inbox_events_parked_total',
      help: 'Inbox events parked (status failed), by provider and reason code',
      labelNames: ['provider', 'code'] as const,
      registers: [registry],
    }),
    inboxDeferred: new Counter({
      name: 'tally_inbox_events_deferred_total',
      help: 'Times an inbox event said "retry later" (a prerequisite missing, a provider rate limit)',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    referenceConflicts: new Counter({
      name: 'tally_ledger_reference_conflicts_total',
      help: 'Ledger postings refused because their reference already posts another user or amount',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    revenueCatCustomersCreated: revenueCatCustomersCreatedCounter(registry),
    relayReenqueued: new Counter({
      name: 'tally_relay_reenqueued_total',
      help: 'Durable rows the relay handed to their queue again (jobs that were really missing)',
      labelNames: ['source'] as const,
      registers: [registry],
    }),
    queueJobs: new Gauge({
      name: 'tally_queue_jobs',
      help: 'BullMQ jobs by queue and state, read at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
    }),
    oldestPendingAge: new Gauge({
      name: 'tally_inbox_oldest_unprocessed_age_seconds',
      help: 'Seconds since the oldest unfinished inbox event became due',
      registers: [registry],
    }),
    inboxLag: new Histogram({
      name: 'tally_inbox_event_lag_seconds',
      help: 'Inbox lag: seconds from receipt to the end of processing (processed or ignored), by provider',
      labelNames: ['provider'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600],
      registers: [registry],
    }),
    // Read at scrape time from Postgres (readOperationalCounts): the whole system's state, the same
    // from every replica, so dashboards and alerts aggregate them with max(), never sum().
    ledgerEntries: new Gauge({
      name: 'tally_ledger_entries',
      help: 'Ledger entries ever posted, by direction (credit, debit) and reason; read from Postgres at scrape time',
      labelNames: ['direction', 'reason'] as const,
      registers: [registry],
    }),
    ledgerTokens: new Gauge({
      name: 'tally_ledger_tokens',
      help: 'Tokens ever credited or debited (absolute), by direction and reason; read from Postgres at scrape time',
      labelNames: ['direction', 'reason'] as const,
      registers: [registry],
    }),
    inboxParkedNow: new Gauge({
      name: 'tally_inbox_events_parked',
      help: 'Inbox events parked now (status failed), by provider and type (unknown types: other); read at scrape time',
      labelNames: ['provider', 'type'] as const,
      registers: [registry],
    }),
    studioRequests: new Gauge({
      name: 'tally_studio_requests',
      help: 'AI Studio requests (the saga) by status; read from Postgres at scrape time',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    stripeInstallments: new Gauge({
      name: 'tally_stripe_installments',
      help: 'Annual-plan installments by status; read from Postgres at scrape time',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    /** Stripe reconciliation (role 'reconcile' only: registered by enableReconcileMetrics). */
    reconcileFindings: new Gauge({
      name: 'tally_reconcile_findings',
      help: 'What the last Stripe reconciliation found, by kind (missing_events were backfilled)',
      labelNames: ['kind'] as const,
      registers: [],
    }),
    reconcileLastRun: new Gauge({
      name: 'tally_reconcile_last_run_timestamp_seconds',
      help: 'When the last Stripe reconciliation finished (Unix seconds)',
      registers: [],
    }),
    /** Registers the reconciliation series (at zero) in a process that runs the reconcile role. */
    enableReconcileMetrics() {
      if (registry.getSingleMetric('tally_reconcile_findings')) return;
      registry.registerMetric(metrics.reconcileFindings);
      registry.registerMetric(metrics.reconcileLastRun);
      for (const kind of reconcileFindingKinds) metrics.reconcileFindings.set({ kind }, 0);
    },
    recordReconciliation(report: StripeReconciliationReport) {
      metrics.enableReconcileMetrics();
      metrics.reconcileFindings.set({ kind: 'missing_events' }, report.missingEvents.length);
      metrics.reconcileFindings.set({ kind: 'events_without_rows' }, report.eventsWithoutRows.length);
      metrics.reconcileFindings.set({ kind: 'ledger_rows_without_event' }, report.ledgerRowsWithoutEvent.length);
      metrics.reconcileLastRun.set(Date.now() / 1000);
    },
    /** Sets the database gauges from one read; label sets seen before and now absent go to 0. */
    setOperationalCounts(counts: OperationalCounts) {
      for (const direction of ['credit', 'debit'] as const) {
        for (const reason of seenLedgerReasons) {
          metrics.ledgerEntries.set({ direction, reason }, 0);
          metrics.ledgerTokens.set({ direction, reason }, 0);
        }
      }
      for (const row of counts.ledger) {
        seenLedgerReasons.add(row.reason);
        metrics.ledgerEntries.set({ direction: row.direction, reason: row.reason }, row.entries);
        metrics.ledgerTokens.set({ direction: row.direction, reason: row.reason }, row.tokens);
      }
      metrics.inboxParkedNow.reset();
      for (const provider of providers) {
        for (const type of [...metricEventTypes[provider], 'other']) metrics.inboxParkedNow.set({ provider, type }, 0);
      }
      for (const row of counts.parked) {
        const type = metricEventTypes[row.provider].includes(row.type) ? row.type : 'other';
        metrics.inboxParkedNow.inc({ provider: row.provider, type }, row.count);
      }
      for (const status of studioRequestStatuses) metrics.studioRequests.set({ status }, 0);
      for (const row of counts.studioRequests) metrics.studioRequests.set({ status: row.status }, row.count);
      for (const status of installmentStatuses) metrics.stripeInstallments.set({ status }, 0);
      for (const row of counts.installments) metrics.stripeInstallments.set({ status: row.status }, row.count);
    },
  };
  const seenLedgerReasons = new Set<string>(knownLedgerReasons);
  metrics.setOperationalCounts({ ledger: [], parked: [], studioRequests: [], installments: [] });
  for (const provider of providers) {
    for (const code of parkedCodes) metrics.inboxParked.inc({ provider, code }, 0);
    metrics.inboxDeferred.inc({ provider }, 0);
    metrics.referenceConflicts.inc({ provider }, 0);
  }
  metrics.relayReenqueued.inc({ source: 'inbox' }, 0);
  return metrics;
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/**
 * RevenueCat reads answered 201: RevenueCat created a customer for an id it did not know (its
 * read is get-or-create). Tally reads only ids RevenueCat sent, so this should stay at zero (a
 * customer deleted at RevenueCat and then named again by an old event would count).
 */
function revenueCatCustomersCreatedCounter(registry: Registry) {
  return new Counter({
    name: 'tally_revenuecat_customers_created_total',
    help: 'RevenueCat subscriber reads that created the customer (201): should stay 0',
    registers: [registry],
  });
}

/** Api: Node's defaults (HTTP answers are in the access log); flows add their own families. */
export function createApiMetrics() {
  const registry = createRegistry('api');
  return { registry, revenueCatCustomersCreated: revenueCatCustomersCreatedCounter(registry) };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;
