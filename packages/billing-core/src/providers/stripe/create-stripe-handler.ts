import type { Catalog } from '../../catalog/catalog';
import { ignored } from '../../inbox/inbox-handler';
import type { ProviderPorts } from '../../ports/provider-ports';
import { createProviderHandler, defineRoute, type EventRoute } from '../shared/create-provider-handler';
import type { EventPolicy } from '../shared/payment-environment';
import { createPaymentIntentSucceededRoute } from './routes/payment-intent-succeeded';
import { parseStripeEvent, type StripeEvent } from './stripe-event';

export interface StripeHandlerDeps {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
}

/** Stripe's routing table: one route per event family; other types are recorded and ignored. */
export function createStripeHandler(deps: StripeHandlerDeps) {
  const routes: Record<string, EventRoute<StripeEvent, unknown>> = {
    'payment_intent.succeeded': createPaymentIntentSucceededRoute(deps),
  };
  return createProviderHandler<StripeEvent>({
    parse: parseStripeEvent,
    typeOf: (event) => event.type,
    connectAccountOf: (event) => (typeof event.account === 'string' && event.account.length > 0 ? event.account : null),
    routes,
    fallback: defineRoute<StripeEvent, undefined>({
      apply: async (_trx, event) => ignored('unhandled_type', `event type ${event.type} is not handled`),
    }),
    policy: deps.policy,
  });
}
