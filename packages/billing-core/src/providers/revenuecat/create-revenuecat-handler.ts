import type { Catalog } from '../../catalog/catalog';
import { ignored } from '../../inbox/inbox-handler';
import type { ProviderPorts } from '../../ports/provider-ports';
import type { EventPolicy } from '../../provider-data/payment-environment';
import { createProviderHandler, defineRoute, type EventRoute } from '../shared/create-provider-handler';
import { parseRevenueCatWebhook, type RevenueCatEvent } from './revenuecat-event';
import { createCancellationRoute } from './routes/cancellation';
import { createSubscriptionEventsRoute, revenueCatSubscriptionEventTypes } from './routes/subscription-events';
import { createTokenPackPurchaseRoute } from './routes/token-pack-purchase';
import { createTokenPackRefundRoute } from './routes/token-pack-refund';

export interface RevenueCatHandlerDeps {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
  /** REVENUECAT_VERIFY_PURCHASES: token packs credit only once RevenueCat's REST read lists them. */
  verifyPurchases: boolean;
}

/** The RevenueCat event types with a route (metrics label them by name; others are 'other'). */
export const revenueCatHandledEventTypes: readonly string[] = [
  'NON_RENEWING_PURCHASE',
  'TEST',
  'CANCELLATION',
  ...revenueCatSubscriptionEventTypes,
];

/** RevenueCat's routing table: one route per event family; unknown types are recorded and ignored. */
export function createRevenueCatHandler(deps: RevenueCatHandlerDeps) {
  const subscriptionEvents = createSubscriptionEventsRoute(deps);
  const routes: Record<string, EventRoute<RevenueCatEvent, unknown>> = {
    NON_RENEWING_PURCHASE: createTokenPackPurchaseRoute(deps),
    TEST: defineRoute<RevenueCatEvent, undefined>({
      environmentCheck: 'none',
      apply: async () => ignored('test_event', 'test event'),
    }),
  };
  for (const type of revenueCatSubscriptionEventTypes) routes[type] = subscriptionEvents;
  routes.CANCELLATION = createCancellationRoute({
    catalog: deps.catalog,
    subscriptionEvents,
    tokenPackRefund: createTokenPackRefundRoute(deps),
  });
  return createProviderHandler<RevenueCatEvent>({
    parse: parseRevenueCatWebhook,
    typeOf: (event) => event.type,
    routes,
    fallback: defineRoute<RevenueCatEvent, undefined>({
      apply: async (_trx, event) => ignored('unhandled_type', `event type ${event.type} is not handled`),
    }),
    policy: deps.policy,
  });
}
