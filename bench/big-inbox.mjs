// `node bench/big-inbox.mjs` (after `tsc -b`): Tally's ingest and drain on empty tables against a
// big history (bench/prefill-history.mjs: 10 million processed inbox rows and 10 million ledger
// rows over a million users by default), in ALTERNATING rounds, then the plans of the hot
// statements on both (auto_explain), on private resources removed at the end.
//
// The history is prefilled once; each round then measures both databases in rotated order: a
// fresh empty one (cloned from the migrated template) and the history. A side stores
// BIG_INBOX_EVENTS (10000) signed Stripe pack purchases through Tally's ingest (closed loop,
// BENCH_CONNECTIONS), then drains them with one worker. Each purchase is by its own user, one that
// exists with a wallet on both sides (the empty side gets those users and wallets only, so the two
// do the same work per event and differ only in the size of the tables), never one an earlier
// round used. Per side and round: ingest req/s, drain events/s (first to last processed_at),
// CPU ms per event of ingest, worker and Postgres (the private cluster's, exact on a loaded
// machine), and per statement the execution time from pg_stat_statements.
//
// Then, with auto_explain on (every statement of Tally's processes logged with EXPLAIN (ANALYZE,
// BUFFERS)), BIG_INBOX_PLAN_EVENTS (200) more purchases through ingest, the same again
// (duplicates: the dedupe insert's conflict path), the drain (claim, credit transaction), and
// billing-core's own reconciliation look-back, support view and console searches called on both
// databases: each statement's median time empty vs big and any sequential scan of 100,000 rows or
// more. Settings: BIG_INBOX_ROUNDS (4), BIG_INBOX_HISTORY="<inbox>,<ledger>,<users>".
// A default-size run is written to bench/results/<time>-big-inbox.json, any other to
// test-output/bench/. The 10 million + 10 million prefill takes about 15 minutes and 11 GB of disk.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBenchContext, machine, rotated } from './context.mjs';
import {
  benchQueryMarker,
  comparePlans,
  disableAutoExplain,
  enableAutoExplain,
  logSize,
  readPlans,
  summarizePlans,
} from './lib/auto-explain.mjs';
import { runClosedLoop } from './lib/closed-loop.mjs';
import { profileEnd, profileStart } from './lib/pg-profile.mjs';
import { benchPool } from './lib/resources.mjs';
import { median, round } from './lib/stats.mjs';
import { signedEvents } from './lib/stripe-events.mjs';
import { root } from './lib/workspace.mjs';
import { redisCpuSeconds } from './phases/drain.mjs';

const ctx = createBenchContext();
const { resources, log, settings } = ctx;
const events = Number(process.env.BIG_INBOX_EVENTS ?? 10_000);
const rounds = Number(process.env.BIG_INBOX_ROUNDS ?? 4);
const planEvents = Number(process.env.BIG_INBOX_PLAN_EVENTS ?? 200);
const defaultHistory = '10000000,10000000,1000000';
const historySpec = process.env.BIG_INBOX_HISTORY ?? defaultHistory;
const [historyInbox, historyLedger, historyUsers] = historySpec.split(',').map(Number);
const DAY_MS = 86_400_000;
const load = () => os.loadavg().map((value) => round(value, 2));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

if (rounds * events + planEvents > historyUsers) {
  throw new Error(`${rounds} rounds of ${events} events plus ${planEvents} need that many history users`);
}

/** billing-core's built functions (the plans are of Tally's own statements, not copies of them). */
const core = {
  ...(await import(path.join(root, 'packages/billing-core/dist/index.js'))),
  ...(await import(path.join(root, 'packages/platform/dist/db/index.js'))),
  // Reconciliation's two look-back queries (reconcileStripe runs them after the Stripe API's backfill).
  ...(await import(path.join(root, 'packages/billing-core/dist/reconcile/find-stripe-events-without-rows.js'))),
  ...(await import(path.join(root, 'packages/billing-core/dist/reconcile/find-stripe-ledger-rows-without-event.js'))),
};

/** The users a side's events go to exist with a wallet on the empty side too (the history has them all). */
async function createUsers(pool, from, count) {
  await pool.query(
    `${benchQueryMarker} INSERT INTO users (id) SELECT 'hist-user-' || u FROM generate_series($1::int, $1::int + $2::int - 1) u`,
    [from, count],
  );
  await pool.query(
    `${benchQueryMarker} INSERT INTO wallets (user_id, balance) SELECT 'hist-user-' || u, 0 FROM generate_series($1::int, $1::int + $2::int - 1) u`,
    [from, count],
  );
}

async function maxInboxId(pool) {
  return Number(
    (await pool.query(`${benchQueryMarker} SELECT coalesce(max(id), 0) AS id FROM inbox_events`)).rows[0].id,
  );
}

/** Waits until `count` rows above `afterId` are finished; returns how many are. */
async function waitDrained(pool, afterId, count, label, pollMs = 500) {
  const deadline = Date.now() + Math.max(300_000, count * 60);
  for (;;) {
    const { rows } = await pool.query(
      `${benchQueryMarker} SELECT count(*)::int AS done FROM inbox_events WHERE id > $1 AND status IN ('processed', 'ignored', 'failed')`,
      [afterId],
    );
    if (rows[0].done >= count) return rows[0].done;
    if (Date.now() > deadline) throw new Error(`${label}: only ${rows[0].done} of ${count} drained in time`);
    // Not more often (but for the first event): these counts are part of the Postgres CPU measured.
    await sleep(pollMs);
  }
}

/** Ingest (closed loop) then one worker's drain of `items` on `url`; the side's figures. */
async function ingestAndDrain(url, prefix, items, label) {
  const pool = benchPool(url);
  try {
    const before = await maxInboxId(pool);
    const loadAverage = load();
    await ctx.checkpoint(pool);
    const ingest = await ctx.startTallyIngest(url, prefix);
    const ingestProfile = await profileStart(ctx.postgres, pool);
    const ingestCpuAtStart = ingest.handle.cpuSeconds();
    const fill = await runClosedLoop({
      url: ingest.url,
      connections: settings.connections,
      amount: items.length,
      items,
    });
    const ingestCpuMs = (ingest.handle.cpuSeconds() - ingestCpuAtStart) * 1000;
    await ingest.handle.stop();
    const ingestPostgres = await profileEnd(ingestProfile, pool, items.length, 'inbox_events');

    await ctx.checkpoint(pool);
    const redisCpuAtStart = await redisCpuSeconds(ctx.redisUrl);
    const drainProfile = await profileStart(ctx.postgres, pool);
    const worker = ctx.startTallyWorker(url, prefix);
    // The worker's CPU from its first processed event on: its start-up (loading, connecting) is
    // not per-event cost.
    const first = await waitDrained(pool, before, 1, label, 50);
    const workerCpuAtFirst = worker.cpuSeconds();
    await waitDrained(pool, before, items.length, label);
    const workerCpuMs = ((worker.cpuSeconds() - workerCpuAtFirst) * 1000 * items.length) / (items.length - first);
    const redisCpuMs = ((await redisCpuSeconds(ctx.redisUrl)) - redisCpuAtStart) * 1000;
    await worker.stop();
    const drainPostgres = await profileEnd(drainProfile, pool, items.length, 'inbox_events');
    const { rows } = await pool.query(
      `${benchQueryMarker} SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds,
              count(*) FILTER (WHERE outcome_code = 'credited')::int AS credited,
              (SELECT count(*)::int FROM inbox_events) AS inbox_rows
         FROM inbox_events WHERE id > $1`,
      [before],
    );
    const figures = {
      label,
      loadAverage,
      inboxRows: rows[0].inbox_rows,
      ingestRps: round(fill.rps),
      ingestNon2xx: fill.non2xx + fill.errors,
      ingestCpuMsPerEvent: round(ingestCpuMs / items.length, 3),
      ingestPostgresCpuMsPerEvent: ingestPostgres.clusterCpuMsPerEvent,
      drainEventsPerSecond: round((rows[0].n - 1) / rows[0].seconds),
      credited: rows[0].credited,
      workerCpuMsPerEvent: round(workerCpuMs / items.length, 3),
      drainPostgresCpuMsPerEvent: drainPostgres.clusterCpuMsPerEvent,
      redisCpuMsPerEvent: round(redisCpuMs / items.length, 3),
      drainWalBytesPerEvent: drainPostgres.walBytesPerEvent,
      ingestStatements: ingestPostgres.statements,
      drainStatements: drainPostgres.statements,
      autovacuumRuns: (ingestPostgres.autovacuumRuns ?? 0) + (drainPostgres.autovacuumRuns ?? 0),
    };
    log(
      `${label}: ingest ${figures.ingestRps} req/s, drain ${figures.drainEventsPerSecond} events/s, credited ${figures.credited}/${items.length}; CPU ms/event ingest ${figures.ingestCpuMsPerEvent} (Postgres ${figures.ingestPostgresCpuMsPerEvent}), worker ${figures.workerCpuMsPerEvent} (Postgres ${figures.drainPostgresCpuMsPerEvent}); load ${loadAverage.join(' ')}`,
    );
    return figures;
  } finally {
    await pool.end();
  }
}

const sideEvents = (side, pass, count, userOffset) =>
  signedEvents({
    tag: `${ctx.runId}${side}${pass}`,
    count,
    users: count,
    secret: ctx.secret,
    userPrefix: 'hist-user',
    userOffset,
  });

async function prefill(url) {
  log(`history: prefilling ${historyInbox} inbox rows, ${historyLedger} ledger rows, ${historyUsers} users`);
  const started = Date.now();
  const run = spawnSync(
    process.execPath,
    [
      path.join(root, 'bench/prefill-history.mjs'),
      url,
      '--inbox',
      String(historyInbox),
      '--ledger',
      String(historyLedger),
      '--users',
      String(historyUsers),
    ],
    { stdio: 'inherit' },
  );
  if (run.status !== 0) throw new Error('prefill failed');
  const seconds = round((Date.now() - started) / 1000);
  log(`history: prefilled in ${seconds} s`);
  const pool = benchPool(url);
  try {
    const { rows } = await pool.query(
      `SELECT pg_total_relation_size('inbox_events')::float8 AS inbox, pg_total_relation_size('ledger_entries')::float8 AS ledger,
              pg_database_size(current_database())::float8 AS database`,
    );
    const gb = (bytes) => round(bytes / 2 ** 30, 2);
    return { seconds, inboxGb: gb(rows[0].inbox), ledgerGb: gb(rows[0].ledger), databaseGb: gb(rows[0].database) };
  } finally {
    await pool.end();
  }
}

/**
 * The plans of the hot statements on one database: auto_explain on, then each step run and its
 * plans read back from the cluster's log. `userOffset`: unused users of that database.
 */
async function planSteps(label, url, userOffset) {
  const database = new URL(url).pathname.slice(1);
  const logFile = ctx.postgres.logFile;
  const prefix = resources.prefix(`${label}-plans`);
  const pool = benchPool(url);
  const items = sideEvents(`${label}plans`, 0, planEvents, userOffset);
  const steps = [];
  const step = async (name, run) => {
    const offset = logSize(logFile);
    await run();
    await sleep(500);
    steps.push({ step: name, statements: summarizePlans(readPlans(logFile, offset)) });
  };
  await resources.admin((admin) => enableAutoExplain(admin, database));
  const database_ = core.createDb({ connectionString: url, maxConnections: 2, applicationName: 'bench-plans' });
  const { db } = database_;
  try {
    const before = await maxInboxId(pool);
    await step('ingest (dedupe insert)', async () => {
      const ingest = await ctx.startTallyIngest(url, prefix);
      await runClosedLoop({ url: ingest.url, connections: 10, amount: items.length, items });
      await ingest.handle.stop();
    });
    await step('ingest, the same events again (conflict)', async () => {
      const ingest = await ctx.startTallyIngest(url, prefix);
      await runClosedLoop({ url: ingest.url, connections: 10, amount: items.length, items });
      await ingest.handle.stop();
    });
    await step('drain (claim, credit)', async () => {
      const worker = ctx.startTallyWorker(url, prefix);
      await waitDrained(pool, before, items.length, `${label} plans`);
      await worker.stop();
    });
    const now = Date.now();
    // Reconciliation's look-back over its default window (3 days: reconcile-stripe.ts).
    await step('reconcile: events without rows (3 days)', () =>
      core.findStripeEventsWithoutRows(db, new Date(now - 3 * DAY_MS), 1000),
    );
    await step('reconcile: ledger rows without event (3 days)', () =>
      core.findStripeLedgerRowsWithoutEvent(db, new Date(now - 3 * DAY_MS), new Date(now - 10 * 60_000), 1000),
    );
    // A user of the history with ten ledger rows (and, on both sides, one of this step's purchases).
    const supportUser = `hist-user-${userOffset}`;
    await step('support view', async () => {
      const view = await core.findUserSupportView(db, supportUser);
      await core.findBalanceSeries(db, view.canonicalUserId);
    });
    const searches = {
      'user id': supportUser,
      'payment intent of the history': 'pi_hist_5000000',
      'provider event id': 'evt_hist_4242',
      'inbox event number': '4242',
      'unknown id': 'cus_NoSuchCustomer',
    };
    for (const [what, text] of Object.entries(searches)) {
      await step(`console search: ${what}`, () => core.findSupportMatches(db, text));
    }
    const lists = {
      'newest events': {},
      'failed events': { status: 'failed' },
      'one type (none of it)': { type: 'charge.refunded' },
      'one outcome (none of it)': { outcomeCode: 'attempts_exhausted' },
      'one user': { userId: supportUser },
      'revenuecat events (none)': { provider: 'revenuecat' },
    };
    for (const [what, filter] of Object.entries(lists)) {
      await step(`console events list: ${what}`, () => core.listInboxEvents(db, { ...filter, limit: 50 }));
    }
  } finally {
    await database_.close();
    await pool.end();
    await resources.admin((admin) => disableAutoExplain(admin, database));
  }
  return steps;
}

function printPlanComparison(comparison) {
  for (const { step, statements } of comparison) {
    console.log(`\n${step}`);
    for (const entry of statements) {
      const ms = `${entry.smallMs ?? '-'} → ${entry.bigMs} ms${entry.ratio === null ? '' : ` (${entry.ratio}×)`}`;
      const blocks = `blocks ${entry.smallBlocks ?? '-'} → ${entry.bigBlocks} (read ${entry.bigBlocksRead})`;
      console.log(`  ${ms.padEnd(28)} ${blocks.padEnd(30)} ×${entry.calls}  ${entry.query.slice(0, 110)}`);
      console.log(`      ${entry.scans.join('; ')}${entry.flags.length ? `   !! ${entry.flags.join('; ')}` : ''}`);
    }
  }
}

const results = {
  runId: ctx.runId,
  machine: machine(),
  commit: spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim(),
  settings: { events, rounds, planEvents, connections: settings.connections, postgres: settings.postgres },
  historySize: { historyInbox, historyLedger, historyUsers },
  rounds: { empty: [], history: [] },
};
const cleanup = ctx.cleanup;

try {
  const postgres = await ctx.startPostgres();
  if (!postgres) throw new Error('big-inbox needs the private cluster (Postgres binaries: initdb, pg_ctl)');
  log(`private Postgres cluster on port ${postgres.port}; run ${ctx.runId}; commit ${results.commit}`);
  await resources.prepareTemplate();
  const historyUrl = await resources.database('history');
  results.prefill = await prefill(historyUrl);
  for (let pass = 0; pass < rounds; pass += 1) {
    // Users pass*events … (pass+1)*events − 1: on the history side, users no earlier round used.
    const userOffset = pass * events;
    for (const side of rotated(['empty', 'history'], pass)) {
      const url = side === 'history' ? historyUrl : await resources.database(`empty${pass}`);
      if (side === 'empty') {
        const pool = benchPool(url);
        await createUsers(pool, userOffset, events).finally(() => pool.end());
      }
      const items = sideEvents(side, pass, events, userOffset);
      results.rounds[side].push(
        await ingestAndDrain(url, resources.prefix(`${side}${pass}`), items, `round ${pass + 1} ${side}`),
      );
    }
  }
  const m = (side, key) => median(results.rounds[side].map((entry) => entry[key]));
  const keys = [
    'ingestRps',
    'drainEventsPerSecond',
    'ingestCpuMsPerEvent',
    'ingestPostgresCpuMsPerEvent',
    'workerCpuMsPerEvent',
    'drainPostgresCpuMsPerEvent',
  ];
  results.medians = Object.fromEntries(
    ['empty', 'history'].map((side) => [side, Object.fromEntries(keys.map((key) => [key, m(side, key)]))]),
  );
  // history / empty, per round (the two sides of a round ran back to back) and of the medians.
  results.ratios = Object.fromEntries(
    keys.map((key) => [
      key,
      {
        perRound: results.rounds.history.map((entry, index) => round(entry[key] / results.rounds.empty[index][key], 2)),
        ofMedians: round(results.medians.history[key] / results.medians.empty[key], 2),
      },
    ]),
  );
  results.allCredited = [...results.rounds.empty, ...results.rounds.history].every(
    (entry) => entry.credited === events && entry.ingestNon2xx === 0,
  );

  const planOffset = rounds * events;
  const emptyPlansUrl = await resources.database('emptyplans');
  const pool = benchPool(emptyPlansUrl);
  await createUsers(pool, planOffset, planEvents).finally(() => pool.end());
  const emptyPlans = await planSteps('empty', emptyPlansUrl, planOffset);
  const historyPlans = await planSteps('history', historyUrl, planOffset);
  results.plans = historyPlans.map(({ step, statements }) => ({
    step,
    statements: comparePlans(emptyPlans.find((entry) => entry.step === step)?.statements ?? [], statements),
  }));
  results.planFlags = results.plans.flatMap(({ step, statements }) =>
    statements
      .filter((entry) => entry.flags.length > 0)
      .map((entry) => ({ step, query: entry.query, flags: entry.flags })),
  );
  results.machine.loadAverageAtEnd = load();

  printPlanComparison(results.plans);
  console.log('\nround by round (history / empty):');
  for (const key of keys) {
    console.log(
      `  ${key.padEnd(28)} empty ${String(results.medians.empty[key]).padStart(8)}  history ${String(results.medians.history[key]).padStart(8)}  ratio ${results.ratios[key].ofMedians} (rounds ${results.ratios[key].perRound.join(', ')})`,
    );
  }
  console.log(`  load average per round: ${results.rounds.empty.map((entry) => entry.loadAverage[0]).join(', ')}`);
  console.log(`  all credited, no ingest error: ${results.allCredited}`);
  console.log(`  plan flags: ${results.planFlags.length === 0 ? 'none' : JSON.stringify(results.planFlags)}`);
  const complete = historySpec === defaultHistory && settings.profile === 'full';
  const dir = path.join(root, complete ? 'bench/results' : 'test-output/bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replaceAll(':', '-').replace(/\..+/, '')}-big-inbox.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${path.relative(process.cwd(), file)}`);
} catch (error) {
  process.exitCode = 1;
  log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  await cleanup();
}
