import {
  type AppleReconciliationReport,
  adminActions,
  appleNotificationSettingsOf,
  appStoreApiClientOf,
  createAppleNotificationVerifier,
  defaultPaymentEnvironments,
  inboxRelaySource,
  paymentEnvironments,
  reconcileApple,
  summarizeAppleReconciliation,
} from '@tally/billing-core';
import {
  appleApiSettings,
  appleWebhookSettings,
  baseEnvSchema,
  parseEnv,
  paymentEnvironmentsSetting,
} from '@tally/platform';
import { handOffOnce } from './hand-off-once';
import { fail } from './output';
import { runAuditedReconciliation } from './reconcile';
import { withDatabase } from './unreachable-server';
import { formatTable } from './user';

/** What `tally reconcile --provider apple` reads: both halves of Apple's configuration, as the api's route. */
export const appleReconcileEnvSchema = baseEnvSchema
  .pick({ DATABASE_URL: true, REDIS_URL: true, QUEUE_PREFIX: true })
  .extend({
    ...appleApiSettings,
    ...appleWebhookSettings,
    PAYMENT_ENVIRONMENTS: paymentEnvironmentsSetting(paymentEnvironments, defaultPaymentEnvironments),
  });

/**
 * `tally reconcile --provider apple [--days n] [--dry-run] [--json]`: Apple reconciliation
 * (docs/stores-apple.md): reads Apple's notification history of the PAYMENT_ENVIRONMENTS, verifies
 * each notification as ingest does and records the ones the inbox lacks (handed to the queue, or
 * to the relay when Redis is unreachable). Unconfigured: exit 1 `not_configured`, nothing called.
 * Exit 0 when nothing was found, 1 when a notification was missing or refused (or on error).
 */
export async function runReconcileApple(options: { days: number; dryRun?: boolean; json?: boolean }): Promise<void> {
  const env = parseEnv(appleReconcileEnvSchema, process.env);
  const notifications = appleNotificationSettingsOf(env);
  const api = appStoreApiClientOf(env);
  if (!notifications || !api) {
    return fail(
      options,
      'not_configured',
      'Apple reconciliation needs the App Store Server API (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH, APPLE_BUNDLE_ID) and the notification check (APPLE_ROOT_CERTIFICATES, APPLE_APP_APPLE_ID)',
    );
  }
  const apple = {
    api,
    verify: createAppleNotificationVerifier(notifications),
    environments: env.PAYMENT_ENVIRONMENTS,
  };
  await withDatabase(
    env.DATABASE_URL,
    async (db) => {
      const request = { windowDays: options.days, dryRun: options.dryRun ?? false };
      await runAuditedReconciliation(
        db,
        {
          action: adminActions.reconcileApple,
          request,
          run: () =>
            reconcileApple({ db, apple, enqueue: (ids) => handOffOnce(env, db, inboxRelaySource, ids) }, request),
          summarize: summarizeAppleReconciliation,
          format: formatAppleReport,
        },
        options,
      );
    },
    2,
  );
}

function formatAppleReport(report: AppleReconciliationReport): string {
  const out: string[] = [
    `Apple reconciliation over ${report.windowDays} day(s) since ${report.windowStart} (${report.environments.join(', ')})${report.dryRun ? ' (dry run)' : ''}: ${report.seen} notifications${report.truncated ? ' (listing truncated)' : ''}, ${report.alreadyStored} already stored, ${report.recorded} recorded, ${report.refused} refused; ${report.ok ? 'nothing found' : 'FOUND DISCREPANCIES'}`,
    '',
    `missing notifications (${report.missingNotifications.length})`,
    formatTable(
      ['NOTIFICATION UUID', 'TYPE', 'ENVIRONMENT', 'SIGNED', 'RESULT', 'INBOX ID'],
      report.missingNotifications.map((item) => [
        item.notificationUUID,
        item.type,
        item.environment,
        item.signedDate ?? '-',
        item.result,
        item.inboxEventId === null ? '-' : String(item.inboxEventId),
      ]),
    ),
    '',
    `refused: failed verification, not stored (${report.refusedNotifications.length})`,
    formatTable(
      ['LISTED BY', 'CODE', 'REASON'],
      report.refusedNotifications.map((item) => [item.listedBy, item.code, item.reason]),
    ),
  ];
  return `${out.join('\n')}\n`;
}
