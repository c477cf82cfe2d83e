import type { BackoffSettings, DebtPolicy, RetryLaterSettings } from '@tally/billing-core';
import type { TransactionBatcherSettings } from '@tally/platform/db';
import type { AppleConsumptionLoopOptions } from '../loops/apple-consumption-loop';
import type { AppleReconcileLoopOptions } from '../loops/apple-reconcile-loop';
import type { AutoTopupLoopOptions } from '../loops/auto-topup-loop';
import type { CreditExpiryLoopOptions } from '../loops/credit-expiry-loop';
import type { GooglePlayConsumeLoopOptions } from '../loops/google-play-loops';
import type { InstallmentsLoopOptions } from '../loops/installments-loop';
import type { ReconcileLoopOptions } from '../loops/reconcile-loop';
import type { RelayOptions } from '../loops/relay-loop';
import type { RetentionLoopOptions } from '../loops/retention-loop';
import type { StudioSweeperOptions } from '../loops/studio-sweeper-loop';

/**
 * Every tunable of the worker's roles. No field has a default here: the composition root takes
 * them from the zod schema (workerSettingsFrom in settings-from-config.ts), the one place with
 * the defaults; tests start from the same and override what they speed up.
 */
export interface WorkerRuntimeSettings {
  /** BullMQ lock (and stalled check) of every consumer: a dead worker's jobs wait this long. */
  lockDurationMs: number;
  /** How long stop() waits for each consumer's active jobs before closing it by force. */
  drainTimeoutMs: number;
  inbox: {
    concurrency: number;
    batch: TransactionBatcherSettings;
    maxAttempts: number;
    backoff: BackoffSettings;
    retryLater: RetryLaterSettings;
  };
  relay: RelayOptions;
  studio: { concurrency: number; maxAttempts: number; backoff: BackoffSettings };
  studioSweeper: StudioSweeperOptions;
  installments: InstallmentsLoopOptions;
  autoTopup: AutoTopupLoopOptions;
  appleConsumption: AppleConsumptionLoopOptions;
  /** The google-play-consume role's loop (docs/stores-google-play.md). */
  googlePlayConsume: GooglePlayConsumeLoopOptions;
  /** The google-play-voided role's pass over the Voided Purchases API. */
  googlePlayVoidedPass: { intervalMs: number };
  creditExpiry: CreditExpiryLoopOptions;
  email: { concurrency: number; maxAttempts: number; backoff: BackoffSettings };
  /**
   * The app-webhooks role's consumer and schedule, the retention of delivered messages, and the
   * low-balance threshold of the messages every role writes (WALLET_LOW_BALANCE_THRESHOLD).
   */
  appWebhooks: {
    concurrency: number;
    retryScheduleMs: readonly number[];
    retentionDays: number;
    lowBalanceThreshold: number | undefined;
    /** DEBT_POLICY of the money the roles write (docs/debt.md). */
    debtPolicy: DebtPolicy;
  };
  retention: RetentionLoopOptions;
  reconcile: ReconcileLoopOptions;
  /** The apple-reconcile role's pass over Apple's notification history (docs/stores-apple.md). */
  appleReconcile: AppleReconcileLoopOptions;
}
