import {
  type AppleReconciliationReport,
  appleConsumptionOutcomes,
  appWebhookMessageTypes,
  autoTopupChargeOutcomes,
  googlePlayConsumeOutcomes,
  installmentStatuses,
  knownLedgerReasons,
  metricEventTypes,
  type OperationalCounts,
  providers,
  revenueCatCustomersCreatedMetric,
  type StripeReconciliationReport,
  studioRequestStatuses,
} from '@tally/billing-core';
import { createClientErrorCounter, createRegistry } from '@tally/platform';
import { Counter, Gauge, Histogram, type Metric } from 'prom-client';

export const reconcileFindingKinds = ['missing_events', 'events_without_rows', 'ledger_rows_without_event'] as const;
/** What the last Apple reconciliation found: notifications it recorded (or would) and ones that failed the check. */
export const appleReconcileFindingKinds = ['missing_notifications', 'refused_notifications'] as const;

/** Parking reasons that have their own zero-initialised series (others appear on first use). */
export const parkedCodes = [
  'attempts_exhausted',
  'invalid_event',
  'reference_conflict',
  'not_configured',
  'waited_too_long',
] as const;

/**
 * The worker's metric families; a process registers only those of the roles it runs
 * (each role's entry in the role table names its families):
 * - `inbox` (inbox role): processing time, lag, parked, deferred and reference-conflict counters;
 * - `relay` (relay role): real re-enqueues by source;
 * - `system` (relay role too): the gauges read from Postgres and Redis at scrape time (queue
 *   depth, the oldest due event, ledger totals, parked rows by type, studio and installment
 *   states). They describe the whole system, the same from every replica, so one role exports
 *   them: the relay, which runs on the few scheduler replicas, not on every inbox consumer;
 * - `reconcile` (reconcile role): the last Stripe reconciliation's findings;
 * - `appleReconcile` (apple-reconcile role): the last Apple reconciliation's findings;
 * - `appWebhooks` (app-webhooks role): delivery attempts, delivered and failed messages;
 * - `autoTopup` (auto-topup role): runs of auto top-up attempts by outcome;
 * - `appleConsumption` (apple-consumption role): runs of App Store consumption requests by outcome;
 * - `googlePlay` (google-play-consume and google-play-voided roles): consumes by outcome, the
 *   oldest purchase not yet consumed, the voided purchases passes and what they found.
 */
export const workerMetricFamilies = [
  'inbox',
  'relay',
  'system',
  'reconcile',
  'appleReconcile',
  'appWebhooks',
  'autoTopup',
  'appleConsumption',
  'googlePlay',
] as const;

/** What a pass over the Voided Purchases API found, per voided purchase (VoidedPassReport). */
export const googlePlayVoidedResults = ['taken_back', 'already_taken_back', 'not_credited', 'deferred'] as const;

/** What one app webhook attempt got: a 2xx, another answer, or no answer (refused, broken, timeout). */
export const appWebhookAttemptOutcomes = ['delivered', 'rejected', 'unreachable'] as const;
export type WorkerMetricFamily = (typeof workerMetricFamilies)[number];

/**
 * Worker metrics. Every series object exists (so callers need no checks), but only the families
 * passed here are registered, and so exported; their labelled series start at zero.
 */
export function createWorkerMetrics(families: Iterable<WorkerMetricFamily>) {
  const registry = createRegistry('worker');
  const enabled = new Set(families);
  const metrics = {
    registry,
    families: enabled as ReadonlySet<WorkerMetricFamily>,
    /** The metrics server's own (every role): what Node's HTTP layer ended before the app saw it. */
    clientErrors: createClientErrorCounter(registry),
    inboxProcessingDuration: new Histogram({
      name: 'tally_inbox_processing_duration_seconds',
      help: 'Time to process one inbox event, by provider, type and outcome',
      labelNames: ['provider', 'type', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [],
    }),
    inboxParked: new Counter({
      name: 'tally_inbox_events_parked_total',
      help: 'Inbox events parked (status failed), by provider and reason code',
      labelNames: ['provider', 'code'] as const,
      registers: [],
    }),
    inboxDeferred: new Counter({
      name: 'tally_inbox_events_deferred_total',
      help: 'Times an inbox event said "retry later" (a prerequisite missing, a provider rate limit)',
      labelNames: ['provider'] as const,
      registers: [],
    }),
    referenceConflicts: new Counter({
      name: 'tally_ledger_reference_conflicts_total',
      help: 'Ledger postings refused because their reference already posts another user or amount',
      labelNames: ['provider'] as const,
      registers: [],
    }),
    inboxLag: new Histogram({
      name: 'tally_inbox_event_lag_seconds',
      help: 'Inbox lag: seconds from receipt to the end of processing (processed or ignored), by provider',
      labelNames: ['provider'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600],
      registers: [],
    }),
    revenueCatCustomersCreated: new Counter({ ...revenueCatCustomersCreatedMetric, registers: [] }),
    relayReenqueued: new Counter({
      name: 'tally_relay_reenqueued_total',
      help: 'Durable rows the relay handed to their queue again (jobs that were really missing)',
      labelNames: ['source'] as const,
      registers: [],
    }),
    // Read at scrape time from Redis and Postgres (refreshSystemGauges): the whole system's state,
    // the same from every replica that exports them, so dashboards and alerts use max(), never sum().
    queueJobs: new Gauge({
      name: 'tally_queue_jobs',
      help: 'BullMQ jobs by queue and state, read at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers: [],
    }),
    oldestPendingAge: new Gauge({
      name: 'tally_inbox_oldest_unprocessed_age_seconds',
      help: 'Seconds since the oldest unfinished inbox event became due',
      registers: [],
    }),
    ledgerEntries: new Gauge({
      name: 'tally_ledger_entries',
      help: 'Ledger entries ever posted, by direction (credit, debit) and reason; read from Postgres at scrape time',
      labelNames: ['direction', 'reason'] as const,
      registers: [],
    }),
    ledgerTokens: new Gauge({
      name: 'tally_ledger_tokens',
      help: 'Tokens ever credited or debited (absolute), by direction and reason; read from Postgres at scrape time',
      labelNames: ['direction', 'reason'] as const,
      registers: [],
    }),
    inboxParkedNow: new Gauge({
      name: 'tally_inbox_events_parked',
      help: 'Inbox events parked now (status failed), by provider and type (unknown types: other); read at scrape time',
      labelNames: ['provider', 'type'] as const,
      registers: [],
    }),
    studioRequests: new Gauge({
      name: 'tally_studio_requests',
      help: 'AI Studio requests (the saga) by status; read from Postgres at scrape time',
      labelNames: ['status'] as const,
      registers: [],
    }),
    stripeInstallments: new Gauge({
      name: 'tally_stripe_installments',
      help: 'Annual-plan installments by status; read from Postgres at scrape time',
      labelNames: ['status'] as const,
      registers: [],
    }),
    appWebhookAttempts: new Counter({
      name: 'tally_app_webhook_attempts_total',
      help: 'Attempts to deliver an app webhook message, by outcome (delivered, rejected, unreachable)',
      labelNames: ['outcome'] as const,
      registers: [],
    }),
    appWebhookDelivered: new Counter({
      name: 'tally_app_webhook_messages_delivered_total',
      help: 'App webhook messages delivered (a 2xx within the timeout), by type',
      labelNames: ['type'] as const,
      registers: [],
    }),
    appWebhookFailed: new Counter({
      name: 'tally_app_webhook_messages_failed_total',
      help: 'App webhook messages that spent their retry schedule (status failed), by type',
      labelNames: ['type'] as const,
      registers: [],
    }),
    // Read at scrape time (system family, relay role), like the inbox backlog above.
    appWebhookOldestPendingAge: new Gauge({
      name: 'tally_app_webhook_oldest_pending_age_seconds',
      help: 'Seconds since the oldest app webhook message not yet delivered nor failed was written',
      registers: [],
    }),
    appWebhookMessages: new Gauge({
      name: 'tally_app_webhook_messages',
      help: 'App webhook messages not yet delivered (pending) and failed for good (failed); read at scrape time',
      labelNames: ['status'] as const,
      registers: [],
    }),
    autoTopupAttempts: new Counter({
      name: 'tally_auto_topup_attempts_total',
      help: 'Runs of auto top-up attempts by outcome (succeeded, declined, requires_action, failed, retry, …)',
      labelNames: ['outcome'] as const,
      registers: [],
    }),
    appleConsumptionRequests: new Counter({
      name: 'tally_apple_consumption_requests_total',
      help: 'Runs of App Store consumption requests by outcome (sent, no_consent, rejected, expired, retry, …)',
      labelNames: ['outcome'] as const,
      registers: [],
    }),
    googlePlayConsumes: new Counter({
      name: 'tally_google_play_consumes_total',
      help: 'Runs of Google Play consumes by outcome (consumed, already_consumed, not_purchased, retry)',
      labelNames: ['outcome'] as const,
      registers: [],
    }),
    googlePlayOldestUnconsumedAge: new Gauge({
      name: 'tally_google_play_oldest_unconsumed_age_seconds',
      help: 'Seconds since the oldest credited Google Play purchase not yet consumed was credited (Google refunds at 3 days)',
      registers: [],
    }),
    googlePlayVoidedPasses: new Counter({
      name: 'tally_google_play_voided_passes_total',
      help: 'Passes over the Google Play Voided Purchases API by outcome (ran, skipped, failed)',
      labelNames: ['outcome'] as const,
      registers: [],
    }),
    googlePlayVoidedFound: new Counter({
      name: 'tally_google_play_voided_purchases_total',
      help: 'Voided purchases the passes listed, by result (taken_back: no notification had; already_taken_back; not_credited; deferred)',
      labelNames: ['result'] as const,
      registers: [],
    }),
    googlePlayVoidedPassLastRun: new Gauge({
      name: 'tally_google_play_voided_pass_last_run_timestamp_seconds',
      help: 'When the last pass over the Voided Purchases API finished (Unix seconds)',
      registers: [],
    }),
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
    recordReconciliation(report: StripeReconciliationReport) {
      metrics.reconcileFindings.set({ kind: 'missing_events' }, report.missingEvents.length);
      metrics.reconcileFindings.set({ kind: 'events_without_rows' }, report.eventsWithoutRows.length);
      metrics.reconcileFindings.set({ kind: 'ledger_rows_without_event' }, report.ledgerRowsWithoutEvent.length);
      metrics.reconcileLastRun.set(Date.now() / 1000);
    },
    appleReconcileFindings: new Gauge({
      name: 'tally_apple_reconcile_findings',
      help: 'What the last Apple reconciliation found, by kind (missing_notifications were recorded; refused_notifications failed verification and were not stored)',
      labelNames: ['kind'] as const,
      registers: [],
    }),
    appleReconcileLastRun: new Gauge({
      name: 'tally_apple_reconcile_last_run_timestamp_seconds',
      help: 'When the last Apple reconciliation finished (Unix seconds)',
      registers: [],
    }),
    recordAppleReconciliation(report: AppleReconciliationReport) {
      metrics.appleReconcileFindings.set({ kind: 'missing_notifications' }, report.missingNotifications.length);
      metrics.appleReconcileFindings.set({ kind: 'refused_notifications' }, report.refused);
      metrics.appleReconcileLastRun.set(Date.now() / 1000);
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
  const familyMetrics: Record<WorkerMetricFamily, Metric[]> = {
    inbox: [
      metrics.inboxProcessingDuration,
      metrics.inboxParked,
      metrics.inboxDeferred,
      metrics.referenceConflicts,
      metrics.inboxLag,
      metrics.revenueCatCustomersCreated,
    ],
    relay: [metrics.relayReenqueued],
    system: [
      metrics.queueJobs,
      metrics.oldestPendingAge,
      metrics.ledgerEntries,
      metrics.ledgerTokens,
      metrics.inboxParkedNow,
      metrics.studioRequests,
      metrics.stripeInstallments,
    ],
    reconcile: [metrics.reconcileFindings, metrics.reconcileLastRun],
    appleReconcile: [metrics.appleReconcileFindings, metrics.appleReconcileLastRun],
    appWebhooks: [metrics.appWebhookAttempts, metrics.appWebhookDelivered, metrics.appWebhookFailed],
    autoTopup: [metrics.autoTopupAttempts],
    appleConsumption: [metrics.appleConsumptionRequests],
    googlePlay: [
      metrics.googlePlayConsumes,
      metrics.googlePlayOldestUnconsumedAge,
      metrics.googlePlayVoidedPasses,
      metrics.googlePlayVoidedFound,
      metrics.googlePlayVoidedPassLastRun,
    ],
  };
  familyMetrics.system.push(metrics.appWebhookOldestPendingAge, metrics.appWebhookMessages);
  for (const family of enabled) for (const metric of familyMetrics[family]) registry.registerMetric(metric);
  if (enabled.has('inbox')) {
    for (const provider of providers) {
      for (const code of parkedCodes) metrics.inboxParked.inc({ provider, code }, 0);
      metrics.inboxDeferred.inc({ provider }, 0);
      metrics.referenceConflicts.inc({ provider }, 0);
    }
  }
  if (enabled.has('relay')) metrics.relayReenqueued.inc({ source: 'inbox' }, 0);
  if (enabled.has('system')) {
    metrics.setOperationalCounts({ ledger: [], parked: [], studioRequests: [], installments: [] });
  }
  if (enabled.has('appWebhooks')) {
    for (const outcome of appWebhookAttemptOutcomes) metrics.appWebhookAttempts.inc({ outcome }, 0);
    for (const type of appWebhookMessageTypes) {
      metrics.appWebhookDelivered.inc({ type }, 0);
      metrics.appWebhookFailed.inc({ type }, 0);
    }
  }
  if (enabled.has('system')) {
    metrics.appWebhookOldestPendingAge.set(0);
    for (const status of ['pending', 'failed']) metrics.appWebhookMessages.set({ status }, 0);
  }
  if (enabled.has('reconcile')) for (const kind of reconcileFindingKinds) metrics.reconcileFindings.set({ kind }, 0);
  if (enabled.has('appleReconcile')) {
    for (const kind of appleReconcileFindingKinds) metrics.appleReconcileFindings.set({ kind }, 0);
  }
  if (enabled.has('autoTopup'))
    for (const outcome of autoTopupChargeOutcomes) metrics.autoTopupAttempts.inc({ outcome }, 0);
  if (enabled.has('appleConsumption'))
    for (const outcome of appleConsumptionOutcomes) metrics.appleConsumptionRequests.inc({ outcome }, 0);
  if (enabled.has('googlePlay')) {
    for (const outcome of googlePlayConsumeOutcomes) metrics.googlePlayConsumes.inc({ outcome }, 0);
    for (const outcome of ['ran', 'skipped', 'failed']) metrics.googlePlayVoidedPasses.inc({ outcome }, 0);
    for (const result of googlePlayVoidedResults) metrics.googlePlayVoidedFound.inc({ result }, 0);
    metrics.googlePlayOldestUnconsumedAge.set(0);
  }
  return metrics;
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
