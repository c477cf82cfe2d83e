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
  };
  for (const provider of providers) {
    for (const code of parkedCodes) metrics.inboxParked.inc({ provider, code }, 0);
    metrics.inboxDeferred.inc({ provider }, 0);
    metrics.referenceConflicts.inc({ provider }, 0);
  }
  metrics.relayReenqueued.inc({ source: 'inbox' }, 0);
  return metrics;
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/** Api: Node's defaults (HTTP answers are in the access log); flows add their own families. */
export function createApiMetrics() {
  return { registry: createRegistry('api') };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;
