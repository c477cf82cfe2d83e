import type { Catalog } from '../catalog/catalog';
import type { InboxHandler, InboxHandlers } from '../inbox/inbox-handler';
import type { ProviderPorts } from '../ports/provider-ports';
import type { EventPolicy } from '../provider-data/payment-environment';
import { createAppleHandler } from './apple/create-apple-handler';
import { createGooglePlayHandler } from './google-play/create-google-play-handler';
import { createRevenueCatHandler } from './revenuecat/create-revenuecat-handler';
import { createStripeHandler } from './stripe/create-stripe-handler';

export interface InboxHandlerDeps {
  catalog: Catalog;
  ports: ProviderPorts;
  policy: EventPolicy;
  /**
   * REVENUECAT_VERIFY_PURCHASES: a RevenueCat token pack credits only after RevenueCat's REST
   * read lists its store transaction (false only in the local demo configuration).
   */
  verifyRevenueCatPurchases: boolean;
}

/**
 * Every provider's handler, built from ports. Called by composition roots (the worker's main,
 * the tests); the engine (processInboxEvents) only sees the resulting table.
 */
export function createInboxHandlers(deps: InboxHandlerDeps): InboxHandlers {
  return {
    revenuecat: createRevenueCatHandler({
      ...deps,
      verifyPurchases: deps.verifyRevenueCatPurchases,
    }) as InboxHandler<unknown>,
    stripe: createStripeHandler(deps) as InboxHandler<unknown>,
    apple: createAppleHandler(deps) as InboxHandler<unknown>,
    google_play: createGooglePlayHandler(deps) as InboxHandler<unknown>,
  };
}
