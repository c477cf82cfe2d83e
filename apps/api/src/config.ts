import { baseEnvSchema, nonEmptyCsvList, paymentEnvironmentsSetting, port, positiveInt } from '@tally/platform';
import { z } from 'zod';

export const apiEnvSchema = baseEnvSchema
  .extend({
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
  })
  // A key in both lists would let whoever holds that app key (a mobile or web client) reach /admin
  // and the queue dashboard. Which key is not said: the message must not print a secret.
  .superRefine((config, ctx) => {
    const appKeys = new Set(config.APP_API_KEYS);
    const shared = config.ADMIN_API_KEYS.filter((key) => appKeys.has(key)).length;
    if (shared > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_API_KEYS'],
        message: `${shared} key(s) also in APP_API_KEYS; an admin key must never be an app key (an app could reach /admin)`,
      });
    }
  });

export type ApiConfig = z.output<typeof apiEnvSchema>;
