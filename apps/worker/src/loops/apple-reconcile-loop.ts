import {
  type AppleNotificationVerifier,
  type AppleReconciliationReport,
  type AppStoreApi,
  type DB,
  type PaymentEnvironment,
  reconcileAppleExclusively,
  summarizeAppleReconciliation,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { Kysely } from 'kysely';
import { reportOfExclusiveRun } from './reconcile-loop';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface AppleReconcileLoopOptions {
  intervalMs: number;
  windowDays: number;
  /** PAYMENT_ENVIRONMENTS: the environments whose notification history is read. */
  environments: readonly PaymentEnvironment[];
}

/**
 * Apple reconciliation on a schedule (role 'apple-reconcile', opt-in; docs/stores-apple.md):
 * records the notifications Apple's history has and the inbox lacks, and logs what it found;
 * `onReport` receives each report (metrics). Without the App Store Server API or the notification
 * check it logs once per tick that it cannot run, and calls nothing. Safe on any number of
 * replicas: each pass runs under a lease (reconcileAppleExclusively), so the others skip their tick.
 */
export function startAppleReconcileLoop(
  deps: {
    db: Kysely<DB>;
    appStore: AppStoreApi | undefined;
    verify: AppleNotificationVerifier | undefined;
    enqueue: (inboxEventIds: number[]) => Promise<unknown>;
    logger: Logger;
    onReport?: (report: AppleReconciliationReport) => void;
  },
  options: AppleReconcileLoopOptions,
): PeriodicLoop {
  return runPeriodic(
    'apple-reconcile',
    options.intervalMs,
    async () => {
      if (!deps.appStore || !deps.verify) {
        deps.logger.warn(
          'the apple-reconcile role runs but the App Store Server API (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH) or the notification check (APPLE_ROOT_CERTIFICATES, APPLE_APP_APPLE_ID) is not set, or APPLE_BUNDLE_ID: nothing to reconcile',
        );
        return;
      }
      const report = reportOfExclusiveRun(
        await reconcileAppleExclusively(
          {
            db: deps.db,
            enqueue: deps.enqueue,
            apple: { api: deps.appStore, verify: deps.verify, environments: options.environments },
          },
          { windowDays: options.windowDays },
        ),
        deps.logger,
        'Apple',
      );
      if (!report) return;
      deps.onReport?.(report);
      const summary = summarizeAppleReconciliation(report);
      if (report.refused > 0) {
        // Apple's own history failing the check means ingest refuses these notifications too:
        // the root certificates, the bundle id or the app's Apple id are likely wrong.
        deps.logger.error(
          { ...summary, refusedList: report.refusedNotifications },
          'Apple reconciliation refused notifications of Apple’s history (failed verification, not stored); check APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID and APPLE_APP_APPLE_ID',
        );
      } else if (report.missingNotifications.length > 0) {
        deps.logger.warn(
          { ...summary, recordedList: report.missingNotifications.map((item) => item.notificationUUID) },
          'Apple reconciliation recorded notifications the inbox lacked',
        );
      } else {
        deps.logger.info(summary, 'Apple reconciliation found nothing');
      }
    },
    deps.logger,
  );
}
