import {
  appleWebhookSettings,
  baseEnvSchema,
  csvList,
  googlePlayPushSettings,
  googlePlayPushVariables,
  hostSetting,
  nodeEnvSetting,
  port,
  positiveInt,
  refuseDemoConfigurationInProduction,
  refuseHalfGooglePlayConfiguration,
  serviceHostSetting,
} from '@tally/platform';
import { z } from 'zod';

export const ingestEnvSchema = baseEnvSchema
  .extend({
    NODE_ENV: nodeEnvSetting,
    INGEST_PORT: port(3000),
    HOST: hostSetting,
    INGEST_HOST: serviceHostSetting,
    STRIPE_WEBHOOK_SECRETS: csvList.refine((secrets) => secrets.every((secret) => secret.startsWith('whsec_')), {
      message: 'every Stripe webhook secret starts with whsec_',
    }),
    STRIPE_WEBHOOK_TOLERANCE_SECONDS: positiveInt(300),
    REVENUECAT_WEBHOOK_AUTH: csvList,
    /** App Store Server Notifications V2 (docs/stores-apple.md): all three, or the store is off. */
    ...appleWebhookSettings,
    /** Google Play's Pub/Sub pushes (docs/stores-google-play.md): off (503 not_configured) until all three are set. */
    ...googlePlayPushSettings,
    WEBHOOK_BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
    /**
     * Webhooks stored by one multi-row insert at most (concurrent requests are batched). At most
     * 1000: each row takes 12 bind parameters and Postgres allows 65,535 per statement.
     */
    INGEST_BATCH_MAX_SIZE: positiveInt(100).pipe(z.number().max(1000)),
    /**
     * Batch inserts in flight at once; each holds one of the pool's 10 connections, kept open
     * through idle spells (the pool's minimum), so at most 10.
     */
    INGEST_BATCH_CONCURRENCY: positiveInt(4).pipe(z.number().max(10)),
    /**
     * A webhook whose event is not stored by then is answered 503 (the provider retries): below
     * the providers' own timeouts, so a database behind a silent network path gets a prompt
     * answer, never a hang (inbox-batcher.ts).
     */
    INGEST_ANSWER_DEADLINE_MS: positiveInt(5_000),
    /**
     * Admission control: webhook requests in flight at once (headers read, not yet answered); over
     * it a webhook is answered 503 `overloaded` with Retry-After at once (0 = no cap). 256 is
     * about a quarter of a second of this process's maximum rate on a quiet 2-core machine, far
     * above a healthy backlog, and few enough that a starved process still answers the admitted
     * ones within the HTTP timeouts (docs/configuration.md).
     */
    INGEST_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(256),
    /** Webhooks failing authentication per client IP and window before 429s (0 = off); valid ones are never limited. */
    WEBHOOK_FAILED_AUTH_LIMIT: z.coerce.number().int().min(0).default(30),
    WEBHOOK_FAILED_AUTH_WINDOW_MS: positiveInt(60_000),
  })
  // NODE_ENV=production: the demo's public secrets stop the start (docs/configuration.md).
  .superRefine(refuseDemoConfigurationInProduction)
  .superRefine(refuseHalfGooglePlayConfiguration(googlePlayPushVariables));

export type IngestConfig = z.output<typeof ingestEnvSchema>;
