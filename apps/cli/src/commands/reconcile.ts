import {
  AUDIT_STARTED_OUTCOME,
  adminActions,
  createStripeApi,
  inboxRelaySource,
  reconcileStripe,
  type StripeReconciliationReport,
  summarizeReconciliation,
} from '@tally/billing-core';
import { baseEnvSchema, parseEnv, providerApiSettings } from '@tally/platform';
import { z } from 'zod';
import { auditCliAction } from './audit-cli-action';
import { handOffOnce } from './hand-off-once';
import { printJson } from './output';
import { describeConnectionFailure, ServerUnreachableError, withDatabase } from './unreachable-server';
import { formatTable } from './user';

export const reconcileEnvSchema = baseEnvSchema
  .pick({ DATABASE_URL: true, REDIS_URL: true, QUEUE_PREFIX: true })
  .extend({
    STRIPE_SECRET_KEY: z.string().min(1, 'STRIPE_SECRET_KEY is required to read Stripe events'),
    STRIPE_API_BASE_URL: providerApiSettings.STRIPE_API_BASE_URL,
    STRIPE_TIMEOUT_MS: providerApiSettings.STRIPE_TIMEOUT_MS,
  });

/**
 * `tally reconcile [--days n] [--dry-run] [--json]`: Stripe reconciliation (docs/operations.md).
 * Missing events are stored as backfill and handed to the queue (the relay picks them up when
 * Redis is unreachable). Exit 0 when nothing was found, 1 when anything was (or on error).
 */
export async function runReconcile(options: { days: number; dryRun?: boolean; json?: boolean }): Promise<void> {
  const env = parseEnv(reconcileEnvSchema, process.env);
  await withDatabase(
    env.DATABASE_URL,
    async (db) => {
      const stripe = createStripeApi({
        secretKey: env.STRIPE_SECRET_KEY,
        apiBaseUrl: env.STRIPE_API_BASE_URL,
        timeoutMs: env.STRIPE_TIMEOUT_MS,
      });
      const request = { windowDays: options.days, dryRun: options.dryRun ?? false };
      // The run is audited before it starts (it spans Stripe calls, so no transaction can hold it
      // with its row): if the row cannot be written, nothing is reconciled.
      // guard: audit-started-row-reconcile
      await auditCliAction(db, { action: adminActions.reconcileStripe, request, outcome: AUDIT_STARTED_OUTCOME });
      const report = await reconcileStripe(
        { db, stripe, enqueue: (ids) => handOffOnce(env, db, inboxRelaySource, ids) },
        request,
      ).catch(async (error: unknown) => {
        const code = (error as { code?: unknown }).code;
        await auditCliAction(db, {
          action: adminActions.reconcileStripe,
          request,
          outcome: typeof code === 'string' ? code : 'failed',
        }).catch(() => undefined);
        throw namingStripe(error, env.STRIPE_API_BASE_URL ?? 'https://api.stripe.com');
      });
      await auditCliAction(db, {
        action: adminActions.reconcileStripe,
        request,
        outcome: 'ok',
        answer: summarizeReconciliation(report),
      });
      if (options.json) printJson(report);
      else process.stdout.write(formatReport(report));
      if (!report.ok) process.exitCode = 1;
    },
    2,
  );
}

function formatReport(report: StripeReconciliationReport): string {
  const out: string[] = [
    `Stripe reconciliation over ${report.windowDays} day(s) since ${report.windowStart}${report.dryRun ? ' (dry run)' : ''}: ${report.stripeEvents} Stripe events${report.truncated ? ' (listing truncated)' : ''}; ${report.ok ? 'nothing found' : 'FOUND DISCREPANCIES'}`,
    '',
    `missing events (${report.missingEvents.length})`,
    formatTable(
      ['EVENT ID', 'TYPE', 'CREATED', 'RESULT', 'INBOX ID'],
      report.missingEvents.map((event) => [
        event.eventId,
        event.type,
        event.createdAt ?? '-',
        event.result,
        event.inboxEventId === null ? '-' : String(event.inboxEventId),
      ]),
    ),
    '',
    `events processed without their rows (${report.eventsWithoutRows.length})`,
    formatTable(
      ['INBOX ID', 'EVENT ID', 'TYPE', 'OUTCOME', 'MISSING'],
      report.eventsWithoutRows.map((event) => [
        String(event.inboxEventId),
        event.eventId,
        event.type,
        event.outcomeCode ?? '-',
        event.missing.join('; '),
      ]),
    ),
    '',
    `ledger rows without an event (${report.ledgerRowsWithoutEvent.length})`,
    formatTable(
      ['LEDGER ID', 'REFERENCE', 'USER', 'AMOUNT', 'CREATED'],
      report.ledgerRowsWithoutEvent.map((row) => [
        String(row.ledgerEntryId),
        row.reference,
        row.userId,
        String(row.amount),
        row.createdAt,
      ]),
    ),
  ];
  return `${out.join('\n')}\n`;
}

/** A Stripe call that never reached Stripe (connection refused, DNS, timeout) names the API URL and cause. */
function namingStripe(error: unknown, apiBaseUrl: string): unknown {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const type = (cause as { type?: unknown } | null | undefined)?.type;
  if (type !== 'StripeConnectionError') return error;
  return new ServerUnreachableError(
    'stripe_unreachable',
    'the Stripe API',
    apiBaseUrl,
    describeConnectionFailure(cause),
  );
}
