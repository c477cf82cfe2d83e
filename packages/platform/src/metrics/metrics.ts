import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** One registry per process, with Node's default metrics and Tally's own. */
export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'tally_' });
  return {
    registry,
    webhookRequests: new Counter({
      name: 'tally_webhook_requests_total',
      help: 'Webhook requests by provider and outcome',
      labelNames: ['provider', 'outcome'] as const,
      registers: [registry],
    }),
    inboxProcessingDuration: new Histogram({
      name: 'tally_inbox_processing_duration_seconds',
      help: 'Time to process one inbox event, by provider, type and outcome',
      labelNames: ['provider', 'type', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    inboxParked: new Counter({
      name: 'tally_inbox_events_parked_total',
      help: 'Inbox events parked after their last allowed attempt',
      labelNames: ['provider', 'type'] as const,
      registers: [registry],
    }),
    relayReenqueued: new Counter({
      name: 'tally_relay_reenqueued_total',
      help: 'Inbox events the relay handed to the queue again',
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
      help: 'Age of the oldest inbox event not yet processed',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
