import { revenueCatCustomersCreatedMetric } from '@tally/billing-core';
import { createRegistry } from '@tally/platform';
import { Counter } from 'prom-client';

/** Api: Node's defaults (HTTP answers are in the access log) and the RevenueCat reads of the on-demand sync. */
export function createApiMetrics() {
  const registry = createRegistry('api');
  return {
    registry,
    revenueCatCustomersCreated: new Counter({ ...revenueCatCustomersCreatedMetric, registers: [registry] }),
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;
