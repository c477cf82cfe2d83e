import type { AiStudioService } from './ai-studio-service';
import type { AppStoreApi } from './app-store-api';
import type { GooglePlayApi } from './google-play-api';
import type { Mailer } from './mailer';
import type { RevenueCatApi } from './revenuecat-api';
import type { StripeApi } from './stripe-api';

/**
 * Everything outside Tally that handlers talk to. The composition root builds real clients from
 * configuration (tests build them against local fake servers); a port left out is "not
 * configured", and an event that needs it parks with `not_configured` until an operator fixes
 * the configuration and requeues it.
 */
export interface ProviderPorts {
  revenueCat?: RevenueCatApi | undefined;
  stripe?: StripeApi | undefined;
  aiStudio?: AiStudioService | undefined;
  mailer?: Mailer | undefined;
  /** The App Store Server API (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH). */
  appStore?: AppStoreApi | undefined;
  /** The Play Developer API (GOOGLE_SERVICE_ACCOUNT_KEY_PATH and GOOGLE_PLAY_PACKAGE_NAME). */
  googlePlay?: GooglePlayApi | undefined;
}
