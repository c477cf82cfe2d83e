import { baseEnvSchema, nonEmptyCsvList, paymentEnvironmentsSetting, port, providerApiSettings } from '@tally/platform';
import type { z } from 'zod';

export const apiEnvSchema = baseEnvSchema
  .extend({
    API_PORT: port(3001),
    APP_API_KEYS: nonEmptyCsvList('app API key'),
    ADMIN_API_KEYS: nonEmptyCsvList('admin API key'),
    /** On-demand subscription sync: which environments' subscriptions count, and RevenueCat REST v1. */
    PAYMENT_ENVIRONMENTS: paymentEnvironmentsSetting,
    ...providerApiSettings,
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
