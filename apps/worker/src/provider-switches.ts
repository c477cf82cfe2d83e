import type { ProviderSwitch } from '@tally/platform';
import type { WorkerConfig } from './config';

/**
 * What the worker says at start about each provider it can run without: whether it is on and,
 * when off, what will actually happen under this configuration. RevenueCat's line depends on
 * REVENUECAT_VERIFY_PURCHASES as well as on its key: with verification off, token packs credit
 * from the webhook body whether or not the key is set, and only subscription events need the key.
 */
export function workerProviderSwitches(
  config: Pick<
    WorkerConfig,
    | 'STRIPE_SECRET_KEY'
    | 'REVENUECAT_API_KEY'
    | 'REVENUECAT_VERIFY_PURCHASES'
    | 'AI_STUDIO_BASE_URL'
    | 'AI_STUDIO_API_KEY'
    | 'SMTP_URL'
    | 'APP_WEBHOOK_URL'
    | 'APPLE_KEY_ID'
    | 'APPLE_ISSUER_ID'
    | 'APPLE_PRIVATE_KEY_PATH'
    | 'APPLE_BUNDLE_ID'
    | 'GOOGLE_PLAY_PACKAGE_NAME'
    | 'GOOGLE_SERVICE_ACCOUNT_KEY_PATH'
  >,
): ProviderSwitch[] {
  return [
    {
      name: 'stripe',
      on: Boolean(config.STRIPE_SECRET_KEY),
      whenOff: 'events that need the Stripe API park as not_configured (set STRIPE_SECRET_KEY)',
    },
    {
      name: 'revenuecat',
      on: Boolean(config.REVENUECAT_API_KEY),
      whenOff: config.REVENUECAT_VERIFY_PURCHASES
        ? 'subscription events and token packs (verified by its REST read) park as not_configured (set REVENUECAT_API_KEY)'
        : 'subscription events park as not_configured (set REVENUECAT_API_KEY); token packs credit from the webhook body, unverified (REVENUECAT_VERIFY_PURCHASES=false)',
    },
    {
      name: 'google_play',
      on: config.GOOGLE_PLAY_PACKAGE_NAME !== undefined && config.GOOGLE_SERVICE_ACCOUNT_KEY_PATH !== undefined,
      whenOff:
        'Google Play purchases park as not_configured, nothing is consumed and the voided pass does nothing (set GOOGLE_PLAY_PACKAGE_NAME and GOOGLE_SERVICE_ACCOUNT_KEY_PATH)',
    },
    {
      name: 'ai_studio',
      on: config.AI_STUDIO_BASE_URL !== undefined && config.AI_STUDIO_API_KEY !== undefined,
      whenOff: 'generations fail as not_configured and are refunded (set AI_STUDIO_BASE_URL and AI_STUDIO_API_KEY)',
    },
    {
      name: 'app_store_api',
      on:
        config.APPLE_KEY_ID !== undefined &&
        config.APPLE_ISSUER_ID !== undefined &&
        config.APPLE_PRIVATE_KEY_PATH !== undefined &&
        config.APPLE_BUNDLE_ID !== undefined,
      whenOff:
        'App Store subscription notifications park as not_configured and consumption requests wait (set APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH, APPLE_BUNDLE_ID)',
    },
    { name: 'smtp', on: config.SMTP_URL !== undefined, whenOff: 'emails are logged, not sent (set SMTP_URL)' },
    {
      name: 'app_webhooks',
      on: config.APP_WEBHOOK_URL !== undefined,
      whenOff: 'outbound messages are written, not delivered (set APP_WEBHOOK_URL)',
    },
  ];
}

/**
 * The warning of a worker whose RevenueCat key is set but whose packs are not verified: the
 * provider line says "on", which alone would hide that a body is trusted as it stands.
 */
export function unverifiedPacksWarning(
  config: Pick<WorkerConfig, 'REVENUECAT_API_KEY' | 'REVENUECAT_VERIFY_PURCHASES'>,
): string | undefined {
  if (config.REVENUECAT_VERIFY_PURCHASES || !config.REVENUECAT_API_KEY) return undefined;
  return 'REVENUECAT_VERIFY_PURCHASES=false: RevenueCat token packs credit from the webhook body without the REST read';
}
