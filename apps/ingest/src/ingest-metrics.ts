import { providers } from '@tally/billing-core';
import { createRegistry } from '@tally/platform';
import { Counter } from 'prom-client';

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

/** The provider label of a webhook request, from its path (`/webhooks/<provider>`); `none` for another path. */
export function providerLabelOf(path: string): string {
  return providers.find((provider) => path.includes(`/webhooks/${provider}`)) ?? 'none';
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
  return { registry, webhookRequests };
}
export type IngestMetrics = ReturnType<typeof createIngestMetrics>;
