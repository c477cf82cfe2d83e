import { providers } from '@tally/billing-core';
import { createClientErrorCounter, createRegistry } from '@tally/platform';
import { Counter, Gauge } from 'prom-client';

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
  'overloaded',
  'rate_limited',
  'error',
] as const;

/** A provider's webhook path segment: its id with dashes (`google_play` → `/webhooks/google-play`). */
export function webhookPathOf(provider: string): string {
  return `/webhooks/${provider.replaceAll('_', '-')}`;
}

/** The provider label of a webhook request, from its path (`/webhooks/<provider>`); `none` for another path. */
export function providerLabelOf(path: string): string {
  return providers.find((provider) => path.includes(webhookPathOf(provider))) ?? 'none';
}

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
  const webhooksInFlight = new Gauge({
    name: 'tally_webhooks_in_flight',
    help: 'Webhook requests admitted and not yet answered (capped by INGEST_MAX_IN_FLIGHT)',
    registers: [registry],
  });
  return { registry, webhookRequests, webhooksInFlight, clientErrors: createClientErrorCounter(registry) };
}
export type IngestMetrics = ReturnType<typeof createIngestMetrics>;
