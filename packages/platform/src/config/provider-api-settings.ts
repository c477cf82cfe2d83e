import { z } from 'zod';
import { positiveInt } from './env';

/**
 * The provider API settings that more than one app reads (the worker's flows, the api's
 * on-demand sync, the CLI's reconcile): written once so their defaults live in one schema.
 * Without a key the flows that need the API park their events as not_configured.
 */
export const providerApiSettings = {
  /** RevenueCat REST v1 (subscription sync). */
  REVENUECAT_API_KEY: z.string().min(1).optional(),
  REVENUECAT_API_BASE_URL: z
    .url({ message: 'must be a URL, e.g. https://api.revenuecat.com' })
    .default('https://api.revenuecat.com'),
  REVENUECAT_API_TIMEOUT_MS: positiveInt(10_000),
  // Stripe (docs/stripe.md); without a base URL the SDK talks to the real API.
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_API_BASE_URL: z.url().optional(),
  STRIPE_TIMEOUT_MS: positiveInt(20_000),
};
