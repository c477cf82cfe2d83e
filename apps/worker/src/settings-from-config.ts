import type { WorkerConfig } from './config';
import type { WorkerRuntimeSettings } from './roles/worker-runtime-settings';

/**
 * The roles' settings from the parsed environment. Every value comes from the zod schema
 * (workerEnvSchema), the only place with a default; nothing below billing-core's callers has one.
 */
export function workerSettingsFrom(config: WorkerConfig): WorkerRuntimeSettings {
  return {
    lockDurationMs: config.WORKER_LOCK_DURATION_MS,
    // Three fifths of the shutdown budget for draining jobs; the rest for closing connections.
    drainTimeoutMs: Math.floor(config.SHUTDOWN_TIMEOUT_MS * 0.6),
    inbox: {
      concurrency: config.WORKER_CONCURRENCY,
      batch: { maxItems: config.INBOX_BATCH_MAX_EVENTS, maxTransactions: config.INBOX_BATCH_TRANSACTIONS },
      maxAttempts: config.INBOX_MAX_ATTEMPTS,
      backoff: { baseDelayMs: config.INBOX_BACKOFF_BASE_MS, maxDelayMs: config.INBOX_BACKOFF_MAX_MS },
      retryLater: {
        baseDelayMs: config.INBOX_RETRY_LATER_BASE_MS,
        maxDelayMs: config.INBOX_RETRY_LATER_MAX_DELAY_MS,
        maxWaitMs: config.INBOX_RETRY_LATER_MAX_WAIT_MS,
      },
    },
    relay: {
      intervalMs: config.RELAY_INTERVAL_MS,
      staleAfterMs: config.RELAY_STALE_AFTER_MS,
      processingStaleAfterMs: config.RELAY_PROCESSING_STALE_AFTER_MS,
      batchSize: config.RELAY_BATCH_SIZE,
    },
    studio: {
      concurrency: config.STUDIO_CONCURRENCY,
      maxAttempts: config.STUDIO_MAX_ATTEMPTS,
      backoff: { baseDelayMs: config.STUDIO_BACKOFF_BASE_MS, maxDelayMs: config.STUDIO_BACKOFF_MAX_MS },
    },
    studioSweeper: {
      intervalMs: config.STUDIO_SWEEP_INTERVAL_MS,
      stuckAfterMs: config.STUDIO_STUCK_AFTER_MS,
      batchSize: config.RELAY_BATCH_SIZE,
    },
    installments: {
      intervalMs: config.INSTALLMENTS_INTERVAL_MS,
      batchSize: config.INSTALLMENTS_BATCH_SIZE,
      processingStaleAfterMs: config.INSTALLMENTS_PROCESSING_STALE_AFTER_MS,
      maxAttempts: config.INSTALLMENTS_MAX_ATTEMPTS,
    },
    autoTopup: {
      intervalMs: config.AUTO_TOPUP_INTERVAL_MS,
      batchSize: config.AUTO_TOPUP_BATCH_SIZE,
      leaseMs: config.AUTO_TOPUP_LEASE_MS,
      backoff: { baseDelayMs: config.AUTO_TOPUP_BACKOFF_BASE_MS, maxDelayMs: config.AUTO_TOPUP_BACKOFF_MAX_MS },
      resolveWithinMs: config.AUTO_TOPUP_RESOLVE_WITHIN_HOURS * 3600_000,
    },
    appleConsumption: {
      intervalMs: config.APPLE_CONSUMPTION_INTERVAL_MS,
      batchSize: config.APPLE_CONSUMPTION_BATCH_SIZE,
      leaseMs: config.APPLE_CONSUMPTION_LEASE_MS,
      backoff: {
        baseDelayMs: config.APPLE_CONSUMPTION_BACKOFF_BASE_MS,
        maxDelayMs: config.APPLE_CONSUMPTION_BACKOFF_MAX_MS,
      },
    },
    googlePlayConsume: {
      intervalMs: config.GOOGLE_PLAY_CONSUME_INTERVAL_MS,
      batchSize: config.GOOGLE_PLAY_CONSUME_BATCH_SIZE,
      leaseMs: config.GOOGLE_PLAY_CONSUME_LEASE_MS,
      backoff: {
        baseDelayMs: config.GOOGLE_PLAY_CONSUME_BACKOFF_BASE_MS,
        maxDelayMs: config.GOOGLE_PLAY_CONSUME_BACKOFF_MAX_MS,
      },
    },
    googlePlayVoidedPass: { intervalMs: config.GOOGLE_PLAY_VOIDED_PASS_INTERVAL_MS },
    creditExpiry: {
      intervalMs: config.CREDIT_EXPIRY_INTERVAL_MS,
      noticeHours: config.CREDIT_EXPIRY_NOTICE_HOURS,
      batchSize: config.CREDIT_EXPIRY_BATCH_SIZE,
    },
    email: {
      concurrency: config.EMAIL_CONCURRENCY,
      maxAttempts: config.EMAIL_MAX_ATTEMPTS,
      backoff: { baseDelayMs: config.EMAIL_BACKOFF_BASE_MS, maxDelayMs: config.EMAIL_BACKOFF_MAX_MS },
    },
    appWebhooks: {
      concurrency: config.APP_WEBHOOK_CONCURRENCY,
      retryScheduleMs: config.APP_WEBHOOK_RETRY_SCHEDULE_MS,
      retentionDays: config.APP_WEBHOOK_RETENTION_DAYS,
      lowBalanceThreshold: config.WALLET_LOW_BALANCE_THRESHOLD,
      debtPolicy: config.DEBT_POLICY,
    },
    retention: {
      intervalMs: config.RETENTION_INTERVAL_MS,
      retentionDays: config.INBOX_RAW_BODY_RETENTION_DAYS,
      idempotencyKeyTtlHours: config.IDEMPOTENCY_KEY_TTL_HOURS,
    },
    reconcile: { intervalMs: config.RECONCILE_INTERVAL_MS, windowDays: config.RECONCILE_WINDOW_DAYS },
    appleReconcile: {
      intervalMs: config.APPLE_RECONCILE_INTERVAL_MS,
      windowDays: config.APPLE_RECONCILE_WINDOW_DAYS,
      environments: config.PAYMENT_ENVIRONMENTS,
    },
  };
}
