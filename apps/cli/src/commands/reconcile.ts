import {
  type AdminActionName,
  AUDIT_STARTED_OUTCOME,
  adminActions,
  createStripeApi,
  type DB,
  inboxRelaySource,
  reconcileStripe,
  type StripeReconciliationReport,
  summarizeReconciliation,
} from '@tally/billing-core';
import { baseEnvSchema, type Database, parseEnv, providerApiSettings } from '@tally/platform';
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

/** What `tally reconcile` runs for one provider: its audit action, the run, and how its report reads. */
export interface Reconciliation<Request, Report extends { ok: boolean }> {
  action: AdminActionName;
  request: Request;
  run: () => Promise<Report>;
  summarize: (report: Report) => Record<string, unknown>;
  format: (report: Report) => string;
  /** A failure that never reached the provider, named for the operator (or the error as it is). */
  explain?: (error: unknown) => unknown;
}

/**
 * One audited reconciliation run of the CLI: a `started` audit row before it acts (it spans
 * provider calls, so no transaction can hold it with its row; if the row cannot be written,
 * nothing is reconciled), then one with its outcome. Prints the report (JSON with `json`). Exit 0
 * when nothing was found, 1 when anything was (or on error).
 */
export async function runAuditedReconciliation<Request, Report extends { ok: boolean }>(
  db: Database<DB>['db'],
  reconciliation: Reconciliation<Request, Report>,
  options: { json?: boolean | undefined },
): Promise<void> {
  const { action, request } = reconciliation;
  // guard: audit-started-row-reconcile
  await auditCliAction(db, { action, request, outcome: AUDIT_STARTED_OUTCOME });
  const report = await reconciliation.run().catch(async (error: unknown) => {
    const code = (error as { code?: unknown }).code;
    await auditCliAction(db, { action, request, outcome: typeof code === 'string' ? code : 'failed' }).catch(
      () => undefined,
    );
    throw reconciliation.explain ? reconciliation.explain(error) : error;
  });
  await auditCliAction(db, { action, request, outcome: 'ok', answer: reconciliation.summarize(report) });
  if (options.json) printJson(report);
  else process.stdout.write(reconciliation.format(report));
  if (!report.ok) process.exitCode = 1;
}

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
      await runAuditedReconciliation(
        db,
        {
          action: adminActions.reconcileStripe,
          request,
          run: () =>
            reconcileStripe({ db, stripe, enqueue: (ids) => handOffOnce(env, db, inboxRelaySource, ids) }, request),
          summarize: summarizeReconciliation,
          format: formatReport,
          explain: (error) => namingStripe(error, env.STRIPE_API_BASE_URL ?? 'https://api.stripe.com'),
        },
        options,
      );
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
