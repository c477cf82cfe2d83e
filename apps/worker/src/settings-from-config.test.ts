import { parseEnv } from '@tally/platform';
import { workerEnvSchema, workerPoolSize } from './config';
import { workerSettingsFrom } from './settings-from-config';

const settingsOf = (env: Record<string, string>) =>
  workerSettingsFrom(parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }));

describe('worker settings come from the config schema', () => {
  const defaults = settingsOf({});

  // Every variable the roles' settings are built from: each one, set alone, changes them.
  it.each([
    'WORKER_LOCK_DURATION_MS',
    'SHUTDOWN_TIMEOUT_MS',
    'WORKER_CONCURRENCY',
    'INBOX_BATCH_MAX_EVENTS',
    'INBOX_BATCH_TRANSACTIONS',
    'INBOX_MAX_ATTEMPTS',
    'INBOX_BACKOFF_BASE_MS',
    'INBOX_BACKOFF_MAX_MS',
    'INBOX_RETRY_LATER_BASE_MS',
    'INBOX_RETRY_LATER_MAX_DELAY_MS',
    'INBOX_RETRY_LATER_MAX_WAIT_MS',
    'RELAY_INTERVAL_MS',
    'RELAY_STALE_AFTER_MS',
    'RELAY_PROCESSING_STALE_AFTER_MS',
    'RELAY_BATCH_SIZE',
    'STUDIO_CONCURRENCY',
    'STUDIO_MAX_ATTEMPTS',
    'STUDIO_BACKOFF_BASE_MS',
    'STUDIO_BACKOFF_MAX_MS',
    'STUDIO_SWEEP_INTERVAL_MS',
    'STUDIO_STUCK_AFTER_MS',
    'INSTALLMENTS_INTERVAL_MS',
    'INSTALLMENTS_BATCH_SIZE',
    'INSTALLMENTS_PROCESSING_STALE_AFTER_MS',
    'INSTALLMENTS_MAX_ATTEMPTS',
    'CREDIT_EXPIRY_INTERVAL_MS',
    'CREDIT_EXPIRY_NOTICE_HOURS',
    'CREDIT_EXPIRY_BATCH_SIZE',
    'EMAIL_CONCURRENCY',
    'EMAIL_MAX_ATTEMPTS',
    'EMAIL_BACKOFF_BASE_MS',
    'EMAIL_BACKOFF_MAX_MS',
    'APP_WEBHOOK_CONCURRENCY',
    'APP_WEBHOOK_RETRY_SCHEDULE_MS',
    'APP_WEBHOOK_RETENTION_DAYS',
    'WALLET_LOW_BALANCE_THRESHOLD',
    'INBOX_RAW_BODY_RETENTION_DAYS',
    'RETENTION_INTERVAL_MS',
    'IDEMPOTENCY_KEY_TTL_HOURS',
    'RECONCILE_INTERVAL_MS',
    'RECONCILE_WINDOW_DAYS',
  ])('%s reaches the settings', (variable) => {
    expect(settingsOf({ [variable]: '29' })).not.toEqual(defaults);
  });

  it('keeps the documented defaults', () => {
    expect(defaults).toEqual({
      lockDurationMs: 30_000,
      drainTimeoutMs: 15_000,
      inbox: {
        concurrency: 128,
        batch: { maxItems: 32, maxTransactions: 4 },
        maxAttempts: 15,
        backoff: { baseDelayMs: 5_000, maxDelayMs: 30 * 60_000 },
        retryLater: { baseDelayMs: 10_000, maxDelayMs: 10 * 60_000, maxWaitMs: 24 * 3600_000 },
      },
      relay: { intervalMs: 15_000, staleAfterMs: 60_000, processingStaleAfterMs: 5 * 60_000, batchSize: 500 },
      studio: { concurrency: 4, maxAttempts: 5, backoff: { baseDelayMs: 2_000, maxDelayMs: 60_000 } },
      studioSweeper: { intervalMs: 30_000, stuckAfterMs: 5 * 60_000, batchSize: 500 },
      installments: { intervalMs: 60_000, batchSize: 100, processingStaleAfterMs: 5 * 60_000, maxAttempts: 10 },
      autoTopup: {
        intervalMs: 1_000,
        batchSize: 20,
        leaseMs: 60_000,
        backoff: { baseDelayMs: 5_000, maxDelayMs: 300_000 },
        resolveWithinMs: 23 * 3600_000,
      },
      appleConsumption: {
        intervalMs: 1_000,
        batchSize: 20,
        leaseMs: 60_000,
        backoff: { baseDelayMs: 5_000, maxDelayMs: 600_000 },
      },
      googlePlayConsume: {
        intervalMs: 5_000,
        batchSize: 20,
        leaseMs: 60_000,
        backoff: { baseDelayMs: 10_000, maxDelayMs: 15 * 60_000 },
      },
      googlePlayVoidedPass: { intervalMs: 24 * 3600_000 },
      creditExpiry: { intervalMs: 60_000, noticeHours: 72, batchSize: 100 },
      email: { concurrency: 8, maxAttempts: 10, backoff: { baseDelayMs: 30_000, maxDelayMs: 3600_000 } },
      appWebhooks: {
        concurrency: 8,
        retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
        retentionDays: 30,
        lowBalanceThreshold: undefined,
        debtPolicy: 'settle',
      },
      retention: { intervalMs: 3600_000, retentionDays: 90, idempotencyKeyTtlHours: 24 },
      reconcile: { intervalMs: 3600_000, windowDays: 3 },
      appleReconcile: { intervalMs: 3600_000, windowDays: 3, environments: ['production'] },
    });
  });

  it('opens at most the pool docs/scaling.md budgets: a connection per job of each kind, and 4 for the loops', () => {
    const config = (env: Record<string, string>) =>
      parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env });
    expect(workerPoolSize(config({}))).toBe(144);
    expect(
      workerPoolSize(config({ WORKER_CONCURRENCY: '10', STUDIO_CONCURRENCY: '2', APP_WEBHOOK_CONCURRENCY: '3' })),
    ).toBe(19);
  });
});
