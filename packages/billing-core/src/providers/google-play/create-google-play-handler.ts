import type { Catalog } from '../../catalog/catalog';
import { InvalidEventError } from '../../errors';
import { ignored } from '../../inbox/inbox-handler';
import type { ProviderPorts } from '../../ports/provider-ports';
import type { EventPolicy } from '../../provider-data/payment-environment';
import { createProviderHandler, defineRoute, type EventRoute } from '../shared/create-provider-handler';
import {
  type GooglePlayEvent,
  googlePlayEventTypes,
  googlePlaySubscriptionNotificationTypes,
  googlePlayTestType,
  googlePlayVoidedType,
  parseGooglePlayPush,
} from './google-play-notification';
import { createProductPurchaseRoute } from './routes/product-purchase';
import { createSubscriptionNotificationRoute } from './routes/subscription-notification';
import { createVoidedPurchaseRoute } from './routes/voided-purchase';

export interface GooglePlayHandlerDeps {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
}

/** The Google Play event types metrics name one by one (others are 'other'). */
export const googlePlayHandledEventTypes: readonly string[] = googlePlayEventTypes;

/**
 * Google Play's routing table (docs/stores-google-play.md): one route per notification family;
 * types without a route are recorded and ignored. Ingest checked the package name; the worker
 * checks it again against the API's, so an event stored under another configuration parks.
 */
export function createGooglePlayHandler(deps: GooglePlayHandlerDeps) {
  const routes: Record<string, EventRoute<GooglePlayEvent, unknown>> = {
    ONE_TIME_PRODUCT_PURCHASED: createProductPurchaseRoute(deps),
    // A pending purchase the user canceled: nothing was credited (only purchased ones are).
    ONE_TIME_PRODUCT_CANCELED: defineRoute<GooglePlayEvent, undefined>({
      environmentCheck: 'none',
      apply: async () => ignored('purchase_canceled', 'a pending one-time purchase was canceled; nothing was credited'),
    }),
    [googlePlayVoidedType]: createVoidedPurchaseRoute(),
    [googlePlayTestType]: defineRoute<GooglePlayEvent, undefined>({
      environmentCheck: 'none',
      apply: async () => ignored('test_event', 'test notification'),
    }),
  };
  const subscriptions = createSubscriptionNotificationRoute(deps);
  for (const type of [...Object.values(googlePlaySubscriptionNotificationTypes), 'SUBSCRIPTION_OTHER']) {
    routes[type] = subscriptions;
  }
  return createProviderHandler<GooglePlayEvent>({
    parse(rawBody) {
      const event = parseGooglePlayPush(rawBody);
      const packageName = deps.ports.googlePlay?.packageName;
      if (packageName !== undefined && event.notification.packageName !== packageName) {
        throw new InvalidEventError(
          `the notification is for package ${event.notification.packageName}, not ${packageName}`,
        );
      }
      return event;
    },
    typeOf: (event) => event.type,
    routes,
    fallback: defineRoute<GooglePlayEvent, undefined>({
      apply: async (_uow, event) => ignored('unhandled_type', `notification type ${event.type} is not handled`),
    }),
    policy: deps.policy,
  });
}
