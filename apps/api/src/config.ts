import { baseEnvSchema, nonEmptyCsvList, port, positiveInt } from '@tally/platform';
import { z } from 'zod';

export const apiEnvSchema = baseEnvSchema.extend({
  API_PORT: port(3001),
  APP_API_KEYS: nonEmptyCsvList('app API key'),
  ADMIN_API_KEYS: nonEmptyCsvList('admin API key'),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_API_BASE_URL: z.url().optional(),
  STRIPE_TIMEOUT_MS: positiveInt(20_000),
});

export type ApiConfig = z.output<typeof apiEnvSchema>;
