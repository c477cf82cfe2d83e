import { DEFAULT_MAX_ATTEMPTS } from '@tally/billing-core';
import { baseEnvSchema, port, positiveInt } from '@tally/platform';
import type { z } from 'zod';

export const workerEnvSchema = baseEnvSchema.extend({
  WORKER_METRICS_PORT: port(9464),
  /** Inbox jobs one worker process runs at once; events of one user still apply one at a time. */
  WORKER_CONCURRENCY: positiveInt(8),
  INBOX_MAX_ATTEMPTS: positiveInt(DEFAULT_MAX_ATTEMPTS),
  INBOX_BACKOFF_BASE_MS: positiveInt(5_000),
  INBOX_BACKOFF_MAX_MS: positiveInt(30 * 60_000),
  RELAY_INTERVAL_MS: positiveInt(15_000),
  RELAY_STALE_AFTER_MS: positiveInt(60_000),
  RELAY_PROCESSING_STALE_AFTER_MS: positiveInt(5 * 60_000),
  RELAY_BATCH_SIZE: positiveInt(500),
});

export type WorkerConfig = z.output<typeof workerEnvSchema>;
