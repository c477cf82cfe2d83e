import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * One registry per process with Node's defaults. Each app defines its own metric families
 * (apps/<app>/src/…-metrics.ts) and adds only those it moves, so a dashboard never shows a flat
 * line from a process that cannot change it; labelled counters start at zero for every known
 * label so alerts see them before their first increment.
 */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'tally_' });
  return registry;
}
