import { baseEnvSchema, nonEmptyCsvList, port } from '@tally/platform';
import type { z } from 'zod';

export const apiEnvSchema = baseEnvSchema.extend({
  API_PORT: port(3001),
  APP_API_KEYS: nonEmptyCsvList('app API key'),
  ADMIN_API_KEYS: nonEmptyCsvList('admin API key'),
});

export type ApiConfig = z.output<typeof apiEnvSchema>;
