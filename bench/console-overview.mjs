// `node bench/console-overview.mjs` (after `tsc -b`; Postgres as for the tests): what the console's
// overview and message lists cost on a big inbox and outbox, on a database of its own (dropped at
// the end). It fills:
//  - CONSOLE_BENCH_INBOX (2,000,000) inbox rows of history over two years (bench/prefill-history.mjs,
//    half of them with a ledger row, 100,000 users), then a busy last day: CONSOLE_BENCH_DAY
//    (100,000) events received and processed in the last 24 h, 2,000 of them parked, 500 waiting;
//  - CONSOLE_BENCH_MESSAGES (1,000,000) app-webhook messages delivered over the last 30 days (what
//    retention keeps), 500 failed and 1,000 pending in the last day;
// then VACUUM ANALYZE, and prints EXPLAIN (ANALYZE, BUFFERS) of the overview's hourly statement
// (readHourlyActivity) node by node (which index, rows, blocks), and the median time of each read
// the overview and the message pages make. Not part of `npm run bench`: figures in docs/console.md.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import path from 'node:path';
import { root } from './lib/workspace.mjs';

const fromCore = createRequire(path.join(root, 'packages/billing-core/package.json'));
const core = fromCore(path.join(root, 'packages/billing-core/dist/index.js'));
const testing = fromCore(path.join(root, 'packages/billing-core/dist/testing/index.js'));
const { sql, CompiledQuery } = fromCore('kysely');

const INBOX = Number(process.env.CONSOLE_BENCH_INBOX ?? 2_000_000);
const DAY = Number(process.env.CONSOLE_BENCH_DAY ?? 100_000);
const MESSAGES = Number(process.env.CONSOLE_BENCH_MESSAGES ?? 1_000_000);
const RUNS = Number(process.env.CONSOLE_BENCH_RUNS ?? 7);
const started = Date.now();
const log = (message) =>
  process.stdout.write(`[console-bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${message}\n`);

const database = await testing.createTestDatabase();
const { db } = database;
try {
  log(
    `load average at start: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  const prefill = spawnSync(
    process.execPath,
    [
      path.join(root, 'bench/prefill-history.mjs'),
      database.url,
      '--inbox',
      String(INBOX),
      '--ledger',
      String(INBOX / 2),
      '--users',
      '100000',
    ],
    { stdio: 'inherit' },
  );
  if (prefill.status !== 0) throw new Error('prefill failed');
  // The busy last day: received over the last 24 h, processed 5 ms later; every 50th parked, then 500 waiting.
  await sql`
    INSERT INTO inbox_events (provider, provider_event_id, type, user_id, raw_body, status, attempts,
        outcome_code, received_at, enqueued_at, processed_at, updated_at, last_error)
      SELECT CASE WHEN g % 3 = 0 THEN 'revenuecat' ELSE 'stripe' END, 'evt_day_' || g, 'payment_intent.succeeded',
             'hist-user-' || (g % 100000), '{}',
             CASE WHEN g % 50 = 0 THEN 'failed' ELSE 'processed' END, 1,
             CASE WHEN g % 50 = 0 THEN 'invalid_event' ELSE 'credited' END,
             at, at, CASE WHEN g % 50 = 0 THEN NULL ELSE at + interval '5 milliseconds' END,
             at + interval '5 milliseconds', CASE WHEN g % 50 = 0 THEN 'bench: parked' END
        FROM (SELECT g, now() - interval '24 hours' * (g::float8 / ${DAY}) AS at
                FROM generate_series(1, ${DAY}) g) s`.execute(db);
  await sql`
    INSERT INTO inbox_events (provider, provider_event_id, type, raw_body, received_at)
      SELECT 'stripe', 'evt_wait_' || g, 'invoice.paid', '{}', now() - interval '1 minute' * g
        FROM generate_series(1, 500) g`.execute(db);
  log(`${DAY} events of the last day (${DAY / 50} parked) and 500 waiting`);
  await sql`
    INSERT INTO app_webhook_messages (user_id, type, data, status, attempts, last_status_code, delivered_at, created_at, updated_at)
      SELECT 'hist-user-' || (g % 100000), 'subscription.updated', '{"planId":null}', 'delivered', 1, 204,
             at + interval '50 milliseconds', at, at + interval '50 milliseconds'
        FROM (SELECT g, now() - interval '30 days' * (g::float8 / ${MESSAGES}) AS at
                FROM generate_series(1, ${MESSAGES}) g) s`.execute(db);
  await sql`
    INSERT INTO app_webhook_messages (user_id, type, data, status, attempts, last_status_code, last_error, created_at, updated_at)
      SELECT 'hist-user-' || g, 'subscription.updated', '{"planId":null}',
             CASE WHEN g <= 500 THEN 'failed' ELSE 'pending' END, CASE WHEN g <= 500 THEN 8 ELSE 1 END, 503,
             'HTTP 503: bench', now() - interval '1 minute' * g, now() - interval '1 minute' * g
        FROM generate_series(1, 1500) g`.execute(db);
  log(`${MESSAGES} delivered messages over 30 days, 500 failed and 1000 pending`);
  await sql`VACUUM ANALYZE inbox_events`.execute(db);
  await sql`VACUUM ANALYZE app_webhook_messages`.execute(db);
  const sizes = (
    await sql`SELECT (SELECT count(*) FROM inbox_events)::int AS inbox, (SELECT count(*) FROM app_webhook_messages)::int AS messages,
                     pg_size_pretty(pg_total_relation_size('inbox_events')) AS inbox_size,
                     pg_size_pretty(pg_total_relation_size('app_webhook_messages')) AS messages_size`.execute(db)
  ).rows[0];
  log(
    `inbox_events ${sizes.inbox} rows (${sizes.inbox_size}), app_webhook_messages ${sizes.messages} rows (${sizes.messages_size})`,
  );

  // The hourly statement, node by node.
  const query = core.hourlyActivityQuery().compile(db);
  const explained = await db.executeQuery(
    CompiledQuery.raw(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.sql}`, [...query.parameters]),
  );
  const plan = explained.rows[0]['QUERY PLAN'][0];
  const scans = [];
  const walk = (node) => {
    if (node['Relation Name'] || node['Index Name']) {
      scans.push({
        node: node['Node Type'],
        relation: node['Relation Name'] ?? '',
        index: node['Index Name'] ?? '(none)',
        rows: node['Actual Rows'] * (node['Actual Loops'] ?? 1),
        blocks: (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0),
        heapFetches: node['Heap Fetches'],
      });
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan.Plan);
  log(
    `readHourlyActivity EXPLAIN ANALYZE: execution ${plan['Execution Time'].toFixed(1)} ms, planning ${plan['Planning Time'].toFixed(1)} ms`,
  );
  for (const scan of scans) {
    log(
      `  ${scan.node} on ${scan.relation} using ${scan.index}: ${scan.rows} rows, ${scan.blocks} blocks` +
        (scan.heapFetches === undefined ? '' : `, ${scan.heapFetches} heap fetches`),
    );
  }
  if (scans.some((scan) => scan.node === 'Seq Scan')) log('  WARNING: a sequential scan');
  log(
    `  estimated cost ${plan.Plan['Total Cost'].toFixed(0)}; JIT ${plan.JIT ? `used (${plan.JIT.Timing.Total.toFixed(0)} ms)` : 'not used'}`,
  );

  // The relay's reader, settled once before the timed runs (its first read and first fold).
  const scrapeReader = core.createLedgerTotalsReader();
  await core.readOperationalCounts(db, scrapeReader);
  await core.readOperationalCounts(db, scrapeReader);
  log(
    `ledger totals reader: settled through id ${scrapeReader.settledThrough}, ${scrapeReader.lastLiveEntries} entries beyond it at the last read`,
  );

  // Every read of the overview and the message pages: median of RUNS.
  const reads = {
    'readHourlyActivity (overview charts)': () => core.readHourlyActivity(db),
    'readAppWebhookGauges (overview cards)': () => core.readAppWebhookGauges(db),
    'findOldestDueAgeSeconds (overview card)': () => core.findOldestDueAgeSeconds(db),
    'readOperationalStates (overview tables)': () => core.readOperationalStates(db),
    // A new reader per run: a process's first scrape, which sums the whole ledger.
    'readOperationalCounts, first scrape of a process (sums the whole ledger; not in the console)': () =>
      core.readOperationalCounts(db, core.createLedgerTotalsReader()),
    // One reader across runs, as the relay keeps it: after its first fold, the entries since.
    'readOperationalCounts, later scrapes (the entries since the settled base)': () =>
      core.readOperationalCounts(db, scrapeReader),
    'listAppWebhookMessages status=failed (messages page)': () =>
      core.listAppWebhookMessages(db, { status: 'failed', limit: 50 }),
    'listAppWebhookMessages userId (user page)': () =>
      core.listAppWebhookMessages(db, { userId: 'hist-user-4242', limit: 10 }),
    'listAppWebhookMessages newest (messages page)': () => core.listAppWebhookMessages(db, { limit: 50 }),
  };
  for (const [name, read] of Object.entries(reads)) {
    const times = [];
    for (let i = 0; i < RUNS; i += 1) {
      const t = process.hrtime.bigint();
      await read();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    times.sort((a, b) => a - b);
    log(
      `${name}: median ${times[Math.floor(RUNS / 2)].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[RUNS - 1].toFixed(1)})`,
    );
  }
  const hours = await core.readHourlyActivity(db);
  log(
    `last 24 h: received ${hours.reduce((n, h) => n + h.received, 0)}, finished ${hours.reduce((n, h) => n + h.finished, 0)}, ` +
      `parked ${hours.reduce((n, h) => n + h.parked, 0)}, delivered ${hours.reduce((n, h) => n + h.messagesDelivered, 0)}, ` +
      `failed messages ${hours.reduce((n, h) => n + h.messagesFailed, 0)}`,
  );
  log(
    `load average at end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await database.drop();
}
