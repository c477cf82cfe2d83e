import { baseEnvSchema, nonEmptyCsvList, paymentEnvironmentsSetting, port, positiveInt } from '@tally/platform';
import { z } from 'zod';

export const apiEnvSchema = baseEnvSchema.extend({
  API_PORT: port(3001),
  APP_API_KEYS: nonEmptyCsvList('app API key'),
  ADMIN_API_KEYS: nonEmptyCsvList('admin API key'),
  /** On-demand subscription sync: which environments' subscriptions count, and RevenueCat REST v1. */
  PAYMENT_ENVIRONMENTS: paymentEnvironmentsSetting,
  REVENUECAT_API_KEY: z.string().min(1).optional(),
  REVENUECAT_API_BASE_URL: z.url({ message: 'must be a URL, e.g. https://api.revenuecat.com' }).optional(),
  REVENUECAT_API_TIMEOUT_MS: positiveInt(10_000),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_API_BASE_URL: z.url().optional(),
  STRIPE_TIMEOUT_MS: positiveInt(20_000),
});

export type ApiConfig = z.output<typeof apiEnvSchema>;
