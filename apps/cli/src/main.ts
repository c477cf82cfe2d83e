#!/usr/bin/env node
import {
  APPLE_RECONCILE_MAX_WINDOW_DAYS,
  appWebhookMessageTypes,
  DEFAULT_APPLE_RECONCILE_WINDOW_DAYS,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  inboxStatuses,
  type Provider,
  providers,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
} from '@tally/billing-core';
import { ConfigError, loadDotEnv } from '@tally/platform';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { runAppWebhooksList, runAppWebhooksRedeliver, runAppWebhooksShow } from './commands/app-webhooks';
import { runAutoTopup } from './commands/auto-topup';
import { runEventsList, runReplay, runRequeue } from './commands/events';
import { runEventsShow } from './commands/events-show';
import { runGrant } from './commands/grant';
import { runHoldRelease } from './commands/hold-release';
import { runLedgerOpenLots } from './commands/ledger-open-lots';
import { runLedgerVerify } from './commands/ledger-verify';
import { runLimits } from './commands/limits';
import { runMigrate } from './commands/migrate';
import { printJson } from './commands/output';
import { runReconcile } from './commands/reconcile';
import { runReconcileApple } from './commands/reconcile-apple';
import { runSendSample } from './commands/send-sample';
import { ServerUnreachableError } from './commands/unreachable-server';
import { runUsage } from './commands/usage';
import { runUser } from './commands/user';

function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive whole number');
  return parsed;
}

loadDotEnv();
// Exit codes (docs/operations.md, "CLI: --json and exit codes"): 0 ok; 1 failure, not found, or a discrepancy reported;
// 2 usage error (unknown command or option, bad argument). exitOverride makes commander throw
// instead of exiting with its own code (1 for usage errors); set before the commands so they inherit it.
const program = new Command('tally').description('Tally operator CLI').showHelpAfterError().exitOverride();

program
  .command('migrate')
  .description('create the database if needed and apply pending migrations')
  .option('--no-create-database', 'fail instead of creating a missing database')
  .action((options: { createDatabase: boolean }) => runMigrate(options));

const events = program.command('events').description('inspect the webhook inbox');
events
  .command('list')
  .description('newest inbox events: id, provider, event id, type, user, status, attempts, error/outcome')
  .addOption(new Option('--provider <provider>').choices(providers))
  .addOption(new Option('--status <status>').choices([...inboxStatuses]))
  .option('--type <type>')
  .option('--user <userId>')
  .option('--outcome <code>', 'outcome code, e.g. credited, invalid_event, other_environment')
  .option('--limit <n>', 'how many', positiveInt, 50)
  .option('--json', 'print JSON: {events: [rows with database column names]}')
  .action((options) => runEventsList(options));
events
  .command('show')
  .description('one inbox event: every column and its raw body')
  .argument('<inboxEventId>', 'inbox event id', positiveInt)
  .option('--json', 'print JSON (database column names)')
  .action((id: number, options: { json?: boolean }) => runEventsShow(id, options));

const appWebhooks = program.command('app-webhooks').description('outbound webhooks to the app (docs/app-webhooks.md)');
appWebhooks
  .command('list')
  .description('newest messages: id (webhook-id), type, user, status, attempts, last status code and error')
  .option('--user <userId>')
  .addOption(new Option('--type <type>').choices([...appWebhookMessageTypes]))
  .addOption(new Option('--status <status>').choices(['pending', 'delivered', 'failed']))
  .option('--limit <n>', 'how many', positiveInt, 50)
  .option('--json', 'print JSON: {messages, nextCursor}, as GET /admin/app-webhooks/messages')
  .action((options) => runAppWebhooksList(options));
appWebhooks
  .command('show')
  .description('one message with the body as sent')
  .argument('<id>', 'message id (msg_…, the webhook-id)')
  .option('--json', 'print JSON, as GET /admin/app-webhooks/messages/{id}')
  .action((id: string, options: { json?: boolean }) => runAppWebhooksShow(id, options));
appWebhooks
  .command('redeliver')
  .description('send a delivered or failed message again, under the same webhook-id')
  .argument('<id>', 'message id (msg_…, the webhook-id)')
  .option('--json', 'print JSON: {redelivered, message, enqueued, alreadyQueued, deferred}')
  .action((id: string, options: { json?: boolean }) => runAppWebhooksRedeliver(id, options));

function grantAmount(value: string): number {
  const parsed = positiveInt(value);
  if (parsed > 1_000_000_000) throw new InvalidArgumentError('expected at most 1,000,000,000 tokens');
  return parsed;
}

function grantReference(value: string): string {
  if (!/^[A-Za-z0-9._:-]{1,200}$/.test(value)) {
    throw new InvalidArgumentError('expected 1 to 200 characters of A-Z a-z 0-9 . _ : -');
  }
  return value;
}

function holdId(value: string): string {
  if (!/^hold_[0-9a-f]{24}$/.test(value))
    throw new InvalidArgumentError('expected a hold id (hold_ and 24 hex digits)');
  return value;
}

function futureTime(value: string): Date {
  const time = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time.getTime()) || time.getTime() <= Date.now()) {
    throw new InvalidArgumentError('expected an ISO time in the future, e.g. 2027-01-31T00:00:00Z');
  }
  return time;
}

program
  .command('grant')
  .description('grant promotional tokens to a user (support; audited): a lot under admin:grant:{reference}')
  .argument('<userId>', 'the user id or any id linked to it')
  .argument('<amount>', 'whole tokens (at most 1,000,000,000)', grantAmount)
  .option('--reference <r>', 'the grant reference (the same one grants once); default a generated one', grantReference)
  .option('--expires-at <iso>', 'when the lot expires (default never)', futureTime)
  .option('--note <n>', 'why (kept in the audit row)')
  .option('--json', 'print JSON: {ledgerReference, lotId, amount, expiresAt, balance, alreadyGranted}')
  .action((userId: string, amount: number, options) => runGrant(userId, amount, options));

const hold = program.command('hold').description('holds (docs/holds.md)');
hold
  .command('release')
  .description("release a user's active hold (support; audited): its tokens are available again, no ledger row")
  .argument('<userId>', 'the user id or any id linked to it')
  .argument('<holdId>', 'the hold id (hold_…)', holdId)
  .option('--note <n>', 'why (kept in the audit row)')
  .option('--json', 'print JSON: {id, status, available, alreadyReleased}')
  .action((userId: string, id: string, options) => runHoldRelease(userId, id, options));

/** A limit, or "default" (commander stores a parser's null as ''; runLimits reads "default" as null). */
function spendLimit(value: string): number | 'default' {
  if (value === 'default') return value;
  if (!/^[0-9]{1,15}$/.test(value)) {
    throw new InvalidArgumentError('expected a whole number of tokens (0 or more), or "default"');
  }
  return Number(value);
}

program
  .command('limits')
  .description(
    "a user's spend limits (docs/spend-limits.md): the limits in force, spent this UTC day and month, resets; --daily/--monthly set the user's own (support; audited)",
  )
  .argument('<userId>', 'the user id or any id linked to it')
  .option('--daily <n>', 'tokens per UTC day, or "default" to remove the own limit', spendLimit)
  .option('--monthly <n>', 'tokens per calendar month, or "default" to remove the own limit', spendLimit)
  .option('--note <n>', 'why (kept in the audit row)')
  .option('--json', 'print JSON: {userId, held, daily, monthly}, as GET /admin/users/{userId}/limits')
  .action((userId: string, options) => runLimits(userId, options));

program
  .command('autotopup')
  .description(
    "a user's auto top-up: settings, saved card, this month's count and the newest attempts; --disable turns it off (support; audited, the app is told)",
  )
  .argument('<userId>', 'the user id or any id linked to it')
  .option('--disable', 'turn it off (reason operator); the app enabling it again turns it back on')
  .option('--note <n>', 'why (kept in the audit row; required with --disable)')
  .option('--json', 'print JSON: {disabled?, autoTopup, attempts}, as GET /admin/users/{userId}/auto-topup')
  .action((userId: string, options: { disable?: boolean; note?: string; json?: boolean }, command: Command) => {
    // As the admin route and the console: no disable without a note saying why.
    if (options.disable && !options.note?.trim()) command.error('error: --disable needs --note <n> (why)');
    return runAutoTopup(userId, options);
  });

program
  .command('requeue')
  .description('put a parked (failed) inbox event back to work')
  .argument('<inboxEventId>', 'inbox event id', positiveInt)
  .option('--json', 'print JSON: {requeued, ids, enqueued, deferred}')
  .action((id: number, options: { json?: boolean }) => runRequeue(id, options));

program
  .command('replay')
  .description('re-run processed or ignored events through the current handlers (safe: effects are keyed by reference)')
  .argument('[inboxEventId]', 'one inbox event id (or use filters)', positiveInt)
  .addOption(new Option('--provider <provider>').choices(providers))
  .addOption(new Option('--status <status>').choices(['processed', 'ignored']))
  .option('--type <type>')
  .option('--user <userId>')
  .option('--outcome <code>', 'outcome code, e.g. awaiting_subscription_sync')
  .option('--limit <n>', 'at most this many', positiveInt, 1000)
  .option('--json', 'print JSON: {replayed, ids, enqueued, deferred}')
  .action((id: number | undefined, options) => runReplay(id, options));

const ledger = program.command('ledger').description('ledger tools');
ledger
  .command('verify')
  .description('check every wallet balance against the sum of its ledger entries (exit 1 on a discrepancy)')
  .option('--json', 'print JSON (the same report as GET /admin/ledger/verify)')
  .action((options: { json?: boolean }) => runLedgerVerify(options));
ledger
  .command('open-lots')
  .description('give every wallet whose lots do not hold its balance yet its opening lot (after a rollout to lots)')
  .option('--batch-size <n>', 'wallets per short transaction', positiveInt, 500)
  .option('--json', 'print JSON')
  .action((options: { batchSize: number; json?: boolean }) => runLedgerOpenLots(options));

program
  .command('usage [userId]')
  .description(
    "uses per UTC day and feature (docs/features.md): a user's (any id Tally has seen for them), or across users with --feature to narrow",
  )
  .option('--from <date>', 'first UTC day, YYYY-MM-DD (default: 6 days before --to)')
  .option('--to <date>', 'last UTC day, YYYY-MM-DD (default: today)')
  .option('--feature <id>', 'only this feature')
  .option(
    '--json',
    'print JSON: {userId?, from, to, days: [{date, feature, variant, uses, freeUses, quantities, tokens, users?}]}',
  )
  .action((userId: string | undefined, options: { from?: string; to?: string; feature?: string; json?: boolean }) =>
    runUsage(userId, options),
  );

function positiveDays(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a number of days above 0');
  return parsed;
}

/** What each provider's reconciliation keeps and reads when --days is not given. */
const reconcileWindows = {
  stripe: {
    maxDays: STRIPE_EVENTS_MAX_WINDOW_DAYS,
    defaultDays: DEFAULT_RECONCILE_WINDOW_DAYS,
    keeps: "Stripe's Events API keeps 30",
  },
  apple: {
    maxDays: APPLE_RECONCILE_MAX_WINDOW_DAYS,
    defaultDays: DEFAULT_APPLE_RECONCILE_WINDOW_DAYS,
    keeps: "Apple's notification history keeps 180",
  },
} as const;

program
  .command('reconcile')
  .description(
    "compare a provider's own record with the inbox (exit 1 when anything is found). stripe: ingest the events Stripe's Events API has and the inbox lacks (backfill), report events processed without their rows and stripe ledger rows without an event. apple: verify every notification of Apple's notification history as ingest does and record the ones the inbox lacks",
  )
  .addOption(
    new Option('--provider <provider>', 'whose record').choices(Object.keys(reconcileWindows)).default('stripe'),
  )
  .option('--days <n>', 'window in days (stripe: at most 30, apple: at most 180; default 3)', positiveDays)
  .option('--dry-run', 'report what is missing without recording it')
  .option('--json', 'print JSON (the same report as POST /admin/reconcile/{provider})')
  .action(
    (
      options: { provider: keyof typeof reconcileWindows; days?: number; dryRun?: boolean; json?: boolean },
      command: Command,
    ) => {
      const window = reconcileWindows[options.provider];
      const days = options.days ?? window.defaultDays;
      if (days > window.maxDays) {
        command.error(
          `error: option '--days <n>': at most ${window.maxDays} for ${options.provider} (${window.keeps})`,
          {
            exitCode: 2,
            code: 'commander.invalidArgument',
          },
        );
      }
      const run = options.provider === 'apple' ? runReconcileApple : runReconcile;
      return run({ ...options, days });
    },
  );

program
  .command('user')
  .description(
    'support view of one user: balance, held and available, lots, holds, events (needing attention first), ledger, subscription and history, payments, refunds, top-ups, installments, emails, studio requests, linked ids',
  )
  .argument('<userId>', 'the user id or any id linked to it (RevenueCat app_user_id or alias, Stripe metadata.user_id)')
  .option('--json', 'print JSON (the same shape as GET /admin/users/{userId})')
  .option('--event-limit <n>', 'at most this many events', positiveInt, 100)
  .option('--ledger-limit <n>', 'at most this many ledger entries', positiveInt, 100)
  .option('--studio-limit <n>', 'at most this many studio requests', positiveInt, 50)
  .option('--history-limit <n>', 'at most this many subscription history rows', positiveInt, 50)
  .option('--hold-limit <n>', 'at most this many holds (active first, then the newest ended)', positiveInt, 50)
  .action((userId: string, options) => runUser(userId, options));

program
  .command('send-sample')
  .description('sign and POST a sample webhook to ingest (a token pack purchase by default)')
  .addArgument(new Command().createArgument('<provider>', providers.join(' or ')).choices(providers))
  .option('--user <userId>', 'the user to credit', 'demo-user')
  .option('--product <id>', 'RevenueCat product id, or Stripe token pack id', undefined)
  .option('--event-id <id>', 'provider event id (repeat one to see a duplicate)')
  .option('--file <path>', 'send this body instead of the built-in sample')
  .option('--url <url>', 'ingest base URL (default http://127.0.0.1:$INGEST_PORT)')
  .action((provider: Provider, options) =>
    runSendSample(provider, {
      ...options,
      product: options.product ?? (provider === 'revenuecat' ? 'tokens.100' : 'tokens_100'),
    }),
  );

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CommanderError) {
    // Commander already printed its message (and the help after an error). Help and --version exit 0.
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`tally: ${message}\n`);
  // With --json, stdout always parses: failures print {error: {code, message}} there too.
  if (process.argv.includes('--json')) {
    const code =
      error instanceof ServerUnreachableError
        ? error.code
        : error instanceof ConfigError
          ? 'invalid_configuration'
          : 'failed';
    printJson({ error: { code, message } });
  }
  process.exit(1);
});
