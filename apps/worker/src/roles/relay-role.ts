import {
  appWebhookSource,
  type CatalogQueue,
  createLedgerTotalsReader,
  type DurableRowSource,
  emailOutboxSource,
  inboxRelaySource,
  queueCatalog,
  studioRelaySource,
} from '@tally/billing-core';
import { type RelayRoute, startRelayLoop } from '../loops/relay-loop';
import { refreshSystemGauges } from '../metrics/system-gauges';
import type { RoleContext, WorkerRoleDefinition } from './worker-role';

/** The durable-row tables the relay serves; an outbox joins by adding its source here. */
const relaySources = [inboxRelaySource, studioRelaySource, emailOutboxSource] as const;
/** Relayed only with APP_WEBHOOK_URL: without it nothing consumes the queue, and jobs would pile up in Redis. */
const deliveringSources = [appWebhookSource] as const;

function routeOf<Payload>(source: DurableRowSource<Payload>, context: RoleContext): RelayRoute<Payload> {
  return { source, queue: context.producerQueue(source.queue) };
}

/**
 * `relay`: hands durable rows that may have no job to their queue again, and exports the
 * scrape-time gauges of the whole system (`system`): they are the same from every replica, so
 * the few scheduler replicas read them rather than every inbox consumer at every scrape.
 */
export const relayRole: WorkerRoleDefinition = {
  metricFamilies: ['relay', 'system'],
  start(context) {
    const { db, logger, metrics, settings } = context;
    const sources = context.ports.appWebhookSender ? [...relaySources, ...deliveringSources] : relaySources;
    const routes: RelayRoute[] = sources.map((source) => routeOf<unknown>(source, context));
    const loop = startRelayLoop({ db, routes, logger, metrics }, settings.relay);
    // Queue depth for every catalog queue, whether or not this process produces to it.
    const definitions = Object.values(queueCatalog) as readonly CatalogQueue<unknown>[];
    const gaugeQueues = definitions.map((definition) => context.producerQueue(definition));
    const ledgerTotals = createLedgerTotalsReader();
    return {
      loop,
      stop: () => loop.stop(),
      refreshGauges: () => refreshSystemGauges(gaugeQueues, db, metrics, ledgerTotals),
    };
  },
};
