import { revenueCatCustomersCreatedMetric } from '@tally/billing-core';
import { createClientErrorCounter, createRegistry } from '@tally/platform';
import { Counter } from 'prom-client';

/**
 * What became of `/v1` POSTs sent with an `Idempotency-Key` (docs/idempotency.md): run (new or
 * resumed), answered from the key, refused for another request under the key (422), refused while
 * the first attempt runs (409).
 */
export const idempotencyOutcomes = ['executed', 'replayed', 'conflict', 'in_use'] as const;
export type IdempotencyOutcome = (typeof idempotencyOutcomes)[number];

/**
 * Api: Node's defaults (HTTP answers are in the access log), the RevenueCat reads of the on-demand
 * sync, and the outcomes of idempotency keys (labelled series from zero).
 */
export function createApiMetrics() {
  const registry = createRegistry('api');
  const idempotencyRequests = new Counter({
    name: 'tally_idempotency_requests_total',
    help: 'API POSTs with an Idempotency-Key, by outcome (executed, replayed, conflict, in_use)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of idempotencyOutcomes) idempotencyRequests.inc({ outcome }, 0);
  return {
    registry,
    revenueCatCustomersCreated: new Counter({ ...revenueCatCustomersCreatedMetric, registers: [registry] }),
    idempotencyRequests,
    clientErrors: createClientErrorCounter(registry),
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;
