// `pnpm bench` (node scripts/run.mjs bench, which builds first): Tally against baselines measured
// in the same run, on private resources it creates and removes itself (a database per phase made
// from billing-core's migrations, a queue prefix per phase, Tally's built ingest and worker and
// the baseline servers on free loopback ports). Every target is a ratio to a same-run baseline;
// the targets are taken over rounds run in alternating order, reporting the median.
//
// BENCH_PROFILE=smoke: a few seconds, to check the bench runs. See bench/README.md.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeFlags } from '../scripts/node-flags.mjs';
import { runClosedLoop } from './lib/closed-loop.mjs';
import { runOpenLoop } from './lib/open-loop.mjs';
import { creditScript, insertScript, runPgbench } from './lib/pgbench.mjs';
import { cpuSeconds, freePort, startNode, stopAll, waitForHttp } from './lib/processes.mjs';
import { BenchResources, benchPool } from './lib/resources.mjs';
import { formatTable, median, ratio, round } from './lib/stats.mjs';
import { signedEvents, stripeTokenPackEvent } from './lib/stripe-events.mjs';
import { bullmq, Redis, root } from './lib/workspace.mjs';

const smoke = process.env.BENCH_PROFILE === 'smoke';
const num = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const settings = {
  profile: smoke ? 'smoke' : 'full',
  rounds: num('BENCH_ROUNDS', smoke ? 1 : 3),
  connections: num('BENCH_CONNECTIONS', 50),
  maxSeconds: num('BENCH_DURATION_SECONDS', smoke ? 1 : 8),
  fixedSeconds: num('BENCH_FIXED_RATE_SECONDS', smoke ? 1 : 6),
  warmupSeconds: smoke ? 0 : 2,
  pgbenchClients: num('BENCH_PGBENCH_CLIENTS', num('BENCH_CONNECTIONS', 50)),
  drainEvents: num('BENCH_DRAIN_EVENTS', smoke ? 100 : 20_000),
  drainUsers: num('BENCH_DRAIN_USERS', smoke ? 50 : 10_000),
  drainRounds: num('BENCH_DRAIN_ROUNDS', 1),
  workerConcurrency: 8,
  creditPgbenchSeconds: num('BENCH_CREDIT_PGBENCH_SECONDS', smoke ? 2 : 8),
  e2eSeconds: num('BENCH_E2E_SECONDS', smoke ? 1 : 8),
  e2eRounds: num('BENCH_E2E_ROUNDS', smoke ? 1 : 3),
  e2eWarmupSeconds: smoke ? 0.5 : 3,
  e2eRate: num('BENCH_E2E_RATE', 0),
};

const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const secret = `whsec_bench_${runId}`;
const serverUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const resources = new BenchResources({ serverUrl, redisUrl, runId });
const ingestMain = path.join(root, 'apps/ingest/dist/main.js');
const workerMain = path.join(root, 'apps/worker/dist/main.js');
const bareEndpoint = path.join(root, 'bench/baselines/bare-endpoint.mjs');
const bareWorker = path.join(root, 'bench/baselines/bare-worker.mjs');
/** Tally's processes run with exactly this configuration (printed with the results). */
const tallyEnvironment = {
  PAYMENT_ENVIRONMENTS: 'production,sandbox',
  LOG_LEVEL: 'warn',
};
/** Experiments only (not for figures): extra environment for Tally's ingest, e.g. "INGEST_BATCH_CONCURRENCY=2". */
const tallyIngestExtraEnv = Object.fromEntries(
  (process.env.BENCH_INGEST_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
/**
 * Tally's ingest runs with the node flags every launcher gives it (scripts/node-flags.mjs);
 * BENCH_INGEST_NODE_FLAGS replaces them for experiments (not for figures).
 */
const tallyIngestNodeFlags =
  process.env.BENCH_INGEST_NODE_FLAGS === undefined
    ? nodeFlags.ingest
    : process.env.BENCH_INGEST_NODE_FLAGS.split(' ').filter(Boolean);
/** Profiling only (not for figures): node flags for Tally's worker and the bare worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
const tallyWorkerNodeFlags = (process.env.BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const results = { runId, settings, tallyEnvironment, machine: machine(), rounds: {}, figures: {}, ratios: {} };
const startedAt = Date.now();

function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGb: round(os.totalmem() / 2 ** 30, 1),
    loadAverageAtStart: os.loadavg().map((value) => round(value, 2)),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

function log(message) {
  process.stderr.write(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)}s] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Processes

async function startTallyIngest(databaseUrl, prefix) {
  const port = await freePort();
  const handle = startNode(
    'tally-ingest',
    ingestMain,
    {
      ...tallyEnvironment,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      INGEST_PORT: String(port),
      STRIPE_WEBHOOK_SECRETS: secret,
      REVENUECAT_WEBHOOK_AUTH: `Bearer rc_bench_${runId}`,
      ...tallyIngestExtraEnv,
    },
    [],
    tallyIngestNodeFlags,
  );
  await waitForHttp(handle, `http://127.0.0.1:${port}/healthz`);
  return { handle, url: `http://127.0.0.1:${port}/webhooks/stripe` };
}

function startTallyWorker(databaseUrl, prefix, name = 'tally-worker') {
  return startNode(
    name,
    workerMain,
    {
      ...tallyEnvironment,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      WORKER_METRICS_PORT: '0',
      WORKER_CONCURRENCY: process.env.BENCH_TALLY_CONCURRENCY ?? String(settings.workerConcurrency),
      // As the production inbox deployment runs it (infra/k8s/worker-inbox.yaml): the consumer
      // alone; the relay, email and other loops run in the scheduler deployment.
      WORKER_ROLES: 'inbox',
    },
    [],
    tallyWorkerNodeFlags,
  );
}

async function startBareEndpoint(mode, databaseUrl, prefix) {
  const port = await freePort();
  const handle = startNode(`bare-${mode}`, bareEndpoint, {
    MODE: mode,
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix ?? '',
    STRIPE_SECRET: secret,
  });
  await waitForHttp(handle, `http://127.0.0.1:${port}/healthz`);
  return { handle, url: `http://127.0.0.1:${port}/webhooks/stripe` };
}

function startBareWorker(databaseUrl, prefix) {
  return startNode(
    'bare-worker',
    bareWorker,
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      CONCURRENCY: String(settings.workerConcurrency),
    },
    [],
    tallyWorkerNodeFlags,
  );
}

// ---------------------------------------------------------------------------------------------
// Ingest

let eventBatch = 0;
function events(count, users = 10_000, tag = undefined) {
  eventBatch += 1;
  return signedEvents({ tag: `${runId}${tag ?? `b${eventBatch}`}`, count, users, secret });
}

function openLoopRequests(items) {
  return (index) => {
    const item = items[index % items.length];
    return { body: item.body, headers: { 'content-type': 'application/json', 'stripe-signature': item.signature } };
  };
}

/** Each round runs the targets in a different (rotated) order, so drift hits them alike. */
function rotated(list, pass) {
  const shift = pass % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

async function ingestPhase() {
  log('ingest: starting Tally ingest and the bare endpoints');
  const databaseUrl = await resources.database('ingest');
  const tally = await startTallyIngest(databaseUrl, resources.prefix('ingest-tally'));
  const bareInsert = await startBareEndpoint('insert', databaseUrl);
  const bareAdd = await startBareEndpoint('insert-add', databaseUrl, resources.prefix('ingest-bare'));
  const endpoints = { tally, bareInsert, bareAdd };
  // Every measured run starts after a CHECKPOINT (see checkpoint()): the runs share one database.
  const control = benchPool(databaseUrl);
  const estimate = { tally: 3000, bareInsert: 3000, bareAdd: 3000 };
  const itemsFor = (name, seconds) =>
    events(Math.ceil(Math.max(estimate[name] ?? 3000, 500) * 1.6 * seconds) + settings.connections * 4);

  if (settings.warmupSeconds > 0) {
    for (const name of Object.keys(endpoints)) {
      await runClosedLoop({
        url: endpoints[name].url,
        connections: settings.connections,
        durationSeconds: settings.warmupSeconds,
        items: itemsFor(name, settings.warmupSeconds),
      });
    }
  }

  const max = { pgbenchInsert: [], bareInsert: [], bareAdd: [], tally: [], tallyDuplicate: [] };
  const insert = insertScript();
  for (let pass = 0; pass < settings.rounds; pass += 1) {
    for (const target of rotated(['pgbenchInsert', 'bareInsert', 'bareAdd', 'tally'], pass)) {
      await checkpoint(control);
      if (target === 'pgbenchInsert') {
        const result = await runPgbench({
          url: databaseUrl,
          script: insert,
          clients: settings.pgbenchClients,
          // pgbench's -T includes opening its connections: at least 2 s, or a loaded box reports 0.
          seconds: Math.max(2, settings.maxSeconds),
        });
        max.pgbenchInsert.push({ rps: result.tps, ...result });
        log(
          `ingest round ${pass + 1}: pgbench one-row insert ${round(result.tps)} tps${result.error ? ` (${result.error})` : ''}`,
        );
        continue;
      }
      const items = itemsFor(target, settings.maxSeconds);
      const result = await runClosedLoop({
        url: endpoints[target].url,
        connections: settings.connections,
        durationSeconds: settings.maxSeconds,
        items,
      });
      estimate[target] = result.rps;
      max[target].push(result);
      log(
        `ingest round ${pass + 1}: ${target} ${round(result.rps)} req/s (non-2xx ${result.non2xx}, errors ${result.errors}${result.wrapped ? ', WRAPPED' : ''})`,
      );
      if (target === 'tally') {
        // The duplicate path: the same stored events again, same connections and duration.
        const stored = items.slice(0, Math.min(result.sent, items.length));
        const duplicate = await runClosedLoop({
          url: tally.url,
          connections: settings.connections,
          durationSeconds: settings.maxSeconds,
          items: stored,
        });
        max.tallyDuplicate.push(duplicate);
        log(`ingest round ${pass + 1}: tally duplicates ${round(duplicate.rps)} req/s`);
      }
    }
  }
  results.rounds.ingestMax = max;
  const m = (list) => median(list.map((entry) => entry.rps));
  const figures = {
    pgbenchInsertTps: m(max.pgbenchInsert),
    bareInsertRps: m(max.bareInsert),
    bareAddRps: m(max.bareAdd),
    tallyRps: m(max.tally),
    tallyDuplicateRps: m(max.tallyDuplicate),
    tallyClosedLoopP50Ms: median(max.tally.map((entry) => entry.p50)),
    tallyClosedLoopP99Ms: median(max.tally.map((entry) => entry.p99)),
    tallyDuplicateClosedLoopP50Ms: median(max.tallyDuplicate.map((entry) => entry.p50)),
    tallyDuplicateClosedLoopP99Ms: median(max.tallyDuplicate.map((entry) => entry.p99)),
  };

  // Fixed rates (open loop, corrected for coordinated omission).
  const rates = {
    tallyAt50: Math.max(1, Math.round(figures.tallyRps * 0.5)),
    tallyAt80: Math.max(1, Math.round(figures.tallyRps * 0.8)),
    bareAt50: Math.max(1, Math.round(figures.bareAddRps * 0.5)),
  };
  const runs = [
    ['tally', 'tallyAt50'],
    ['tally', 'tallyAt80'],
    ['tally', 'bareAt50'],
    ['bareAdd', 'bareAt50'],
  ];
  // The bare endpoint at half Tally's maximum too, when that rate does not saturate it.
  if (rates.tallyAt50 < figures.bareAddRps * 0.9) runs.push(['bareAdd', 'tallyAt50']);
  const fixed = {};
  for (let pass = 0; pass < settings.rounds; pass += 1) {
    for (const [target, rateName] of rotated(runs, pass)) {
      const rate = rates[rateName];
      const items = events(Math.ceil(rate * settings.fixedSeconds) + 10);
      await checkpoint(control);
      const result = await runOpenLoop({
        url: endpoints[target].url,
        rate,
        durationSeconds: settings.fixedSeconds,
        next: openLoopRequests(items),
      });
      const key = `${target}@${rateName}`;
      fixed[key] ??= [];
      fixed[key].push(result);
      log(
        `fixed rate round ${pass + 1}: ${key} (${rate}/s) p50 ${round(result.p50, 1)} p99 ${round(result.p99, 1)} p99.9 ${round(result.p999, 1)} ms; non-200 ${result.non200}, errors ${result.errors}`,
      );
    }
  }
  results.rounds.fixedRate = fixed;
  figures.rates = rates;
  figures.fixedRate = Object.fromEntries(
    Object.entries(fixed).map(([key, list]) => [
      key,
      {
        rate: list[0].rate,
        p50Ms: median(list.map((entry) => entry.p50)),
        p99Ms: median(list.map((entry) => entry.p99)),
        p999Ms: median(list.map((entry) => entry.p999)),
        non200: list.reduce((sum, entry) => sum + entry.non200 + entry.errors, 0),
      },
    ]),
  );
  figures.tallyIngestPeakRssMb = tally.handle.peakRssMb();
  figures.bareAddPeakRssMb = bareAdd.handle.peakRssMb();
  await Promise.all(Object.values(endpoints).map((endpoint) => endpoint.handle.stop()));
  await control.end();
  results.figures.ingest = figures;
}

// ---------------------------------------------------------------------------------------------
// Drain

async function waitForProcessed(pool, expected, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(
      "SELECT count(*) FILTER (WHERE status IN ('processed', 'ignored'))::int AS done, count(*) FILTER (WHERE status = 'failed')::int AS failed FROM inbox_events",
    );
    if (rows[0].done + rows[0].failed >= expected) return rows[0];
    if (Date.now() > deadline) throw new Error(`${what}: only ${rows[0].done} of ${expected} processed in time`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Every measured run (ingest max, fixed rate, drain) starts right after a checkpoint, so none
 * pays for the previous runs' WAL: a checkpoint falling inside one contender's run (and the
 * full-page writes after it) would otherwise slow whichever runs later. Needs a superuser or pg_checkpoint; skipped otherwise.
 */
async function checkpoint(pool) {
  try {
    await pool.query('CHECKPOINT');
  } catch (error) {
    log(`CHECKPOINT refused (${error.message}); drains may be uneven`);
  }
}

/**
 * Where a drain's time went: CPU seconds per event of the worker process(es) and of the Postgres
 * backends serving this database (read from /proc before the workers stop; the bench's own
 * connection excluded).
 */
/**
 * CPU seconds the Redis server has used so far (INFO cpu, user + sys, main and child threads).
 * Redis is shared with nothing else during a bench run, so the difference over a drain is the
 * drain's: the queue's share of "where the time goes".
 */
async function redisCpuSeconds() {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  connection.on('error', () => undefined);
  try {
    const info = await connection.info('cpu');
    const value = (key) => Number(new RegExp(`^${key}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
    return value('used_cpu_user') + value('used_cpu_sys');
  } catch {
    return Number.NaN;
  } finally {
    connection.disconnect();
  }
}

async function drainCpu(pool, handles, events, redisCpuAtStart) {
  const { rows } = await pool.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const postgres = rows.reduce((sum, row) => sum + (cpuSeconds(row.pid) || 0), 0);
  const workers = handles.reduce((sum, handle) => sum + handle.cpuSeconds(), 0);
  const redis = (await redisCpuSeconds()) - redisCpuAtStart;
  return {
    workerCpuMsPerEvent: round((workers * 1000) / events, 3),
    postgresCpuMsPerEvent: round((postgres * 1000) / events, 3),
    redisCpuMsPerEvent: round((redis * 1000) / events, 3),
  };
}

async function drainRate(pool) {
  const { rows } = await pool.query(`SELECT count(*)::int AS n,
      extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds,
      count(*) FILTER (WHERE status <> 'processed')::int AS not_processed,
      (SELECT count(*)::int FROM ledger_entries) AS ledger_rows,
      (SELECT coalesce(sum(balance), 0)::float8 FROM wallets) AS balance
    FROM inbox_events`);
  const row = rows[0];
  return {
    events: row.n,
    seconds: row.seconds,
    eventsPerSecond: row.seconds > 0 ? (row.n - 1) / row.seconds : Number.NaN,
    notProcessed: row.not_processed,
    ledgerRows: row.ledger_rows,
    balance: row.balance,
  };
}

const drainTimeoutMs = () => Math.max(120_000, settings.drainEvents * 20);

async function tallyDrain(label, workers) {
  const databaseUrl = await resources.database(label);
  const prefix = resources.prefix(label);
  const ingest = await startTallyIngest(databaseUrl, prefix);
  const items = events(settings.drainEvents, settings.drainUsers);
  const fill = await runClosedLoop({
    url: ingest.url,
    connections: settings.connections,
    amount: items.length,
    items,
  });
  await ingest.handle.stop();
  const pool = benchPool(databaseUrl);
  try {
    const stored = (await pool.query('SELECT count(*)::int AS n FROM inbox_events')).rows[0].n;
    await checkpoint(pool);
    log(`drain ${label}: ${stored} events stored through ingest (${round(fill.rps)}/s); starting ${workers} worker(s)`);
    const redisCpuAtStart = await redisCpuSeconds();
    const handles = Array.from({ length: workers }, (_, index) =>
      startTallyWorker(databaseUrl, prefix, `tally-worker-${index + 1}`),
    );
    await waitForProcessed(pool, stored, label, drainTimeoutMs());
    const rate = await drainRate(pool);
    rate.workerPeakRssMb = handles.map((handle) => handle.peakRssMb());
    Object.assign(rate, await drainCpu(pool, handles, rate.events, redisCpuAtStart));
    await Promise.all(handles.map((handle) => handle.stop()));
    log(
      `drain ${label}: ${round(rate.eventsPerSecond)} events/s; ledger rows ${rate.ledgerRows}, not processed ${rate.notProcessed}; CPU ms/event worker ${rate.workerCpuMsPerEvent}, Postgres ${rate.postgresCpuMsPerEvent}, Redis ${rate.redisCpuMsPerEvent}`,
    );
    return rate;
  } finally {
    await pool.end();
  }
}

/**
 * The bare BullMQ worker draining the same backlog shape, in `workers` processes. With one
 * process it is the drain baseline, followed by pgbench running the credit transaction with the
 * same number of clients (the worker's concurrency) and with twice as many (two workers' worth):
 * the two report-only figures say what a second process can add on this machine at all.
 */
async function bareDrain(label, workers = 1) {
  const databaseUrl = await resources.database(label);
  const prefix = resources.prefix(label);
  const pool = benchPool(databaseUrl);
  const body = stripeTokenPackEvent({ eventId: 'evt_bare', paymentIntentId: 'pi_bare', userId: 'bench-user-0' });
  try {
    // The same backlog shape as Tally's (rows written directly: only the drain is measured).
    await pool.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, user_id, provider_customer_id, provider_payment_intent_id, raw_body, enqueued_at)
       SELECT 'stripe', 'evt_bare_' || g, 'payment_intent.succeeded', false, 'test', 'bench-user-' || (g % $2), 'cus_bench' || (g % $2), 'pi_bare_' || g, $3, now()
       FROM generate_series(0, $1 - 1) AS g`,
      [settings.drainEvents, settings.drainUsers, body],
    );
    const ids = (await pool.query('SELECT id FROM inbox_events ORDER BY id')).rows.map((row) => Number(row.id));
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    connection.on('error', () => undefined);
    const queue = new bullmq.Queue('inbox', { connection, prefix });
    for (let start = 0; start < ids.length; start += 1000) {
      await queue.addBulk(
        ids.slice(start, start + 1000).map((id) => ({
          name: 'process',
          data: { inboxEventId: id },
          opts: { jobId: `inbox-${id}`, removeOnComplete: { age: 7 * 86400, count: 50000 } },
        })),
      );
    }
    await queue.close();
    connection.disconnect();
    await checkpoint(pool);
    log(`drain ${label}: ${ids.length} rows and jobs written; starting ${workers} bare worker process(es)`);
    const redisCpuAtStart = await redisCpuSeconds();
    const handles = Array.from({ length: workers }, () => startBareWorker(databaseUrl, prefix));
    await waitForProcessed(pool, ids.length, label, drainTimeoutMs());
    const rate = await drainRate(pool);
    rate.workerPeakRssMb = handles.map((handle) => handle.peakRssMb());
    Object.assign(rate, await drainCpu(pool, handles, rate.events, redisCpuAtStart));
    await Promise.all(handles.map((handle) => handle.stop()));
    log(
      `drain ${label}: ${round(rate.eventsPerSecond)} events/s; ledger rows ${rate.ledgerRows}; CPU ms/event worker ${rate.workerCpuMsPerEvent}, Postgres ${rate.postgresCpuMsPerEvent}, Redis ${rate.redisCpuMsPerEvent}`,
    );
    if (workers !== 1) return { bare: rate };
    const pgbenchAt = async (clients) => {
      const credit = await runPgbench({
        url: databaseUrl,
        script: creditScript(),
        clients,
        seconds: settings.creditPgbenchSeconds,
        defines: { lo: ids[0], hi: ids[ids.length - 1], users: settings.drainUsers },
      });
      log(
        `drain ${label}: pgbench credit transaction, ${clients} clients: ${round(credit.tps)} tps${credit.error ? ` (${credit.error})` : ''}`,
      );
      return credit;
    };
    const credit = await pgbenchAt(settings.workerConcurrency);
    const creditDoubled = await pgbenchAt(settings.workerConcurrency * 2);
    return { bare: rate, pgbench: credit, pgbenchDoubled: creditDoubled };
  } finally {
    await pool.end();
  }
}

async function drainPhase() {
  const rounds = { tally1: [], tally2: [], bare: [], bare2: [], pgbenchCredit: [], pgbenchCreditDoubled: [] };
  for (let pass = 0; pass < settings.drainRounds; pass += 1) {
    for (const target of rotated(['tally1', 'bare', 'tally2', 'bare2'], pass)) {
      if (target === 'bare') {
        const { bare, pgbench, pgbenchDoubled } = await bareDrain(`drain-bare-${pass}`);
        rounds.bare.push(bare);
        rounds.pgbenchCredit.push(pgbench);
        rounds.pgbenchCreditDoubled.push(pgbenchDoubled);
      } else if (target === 'bare2') {
        rounds.bare2.push((await bareDrain(`drain-bare2-${pass}`, 2)).bare);
      } else {
        rounds[target].push(await tallyDrain(`drain-${target}-${pass}`, target === 'tally1' ? 1 : 2));
      }
    }
  }
  results.rounds.drain = rounds;
  const m = (list) => median(list.map((entry) => entry.eventsPerSecond));
  results.figures.drain = {
    events: settings.drainEvents,
    users: settings.drainUsers,
    tallyOneWorkerEventsPerSecond: m(rounds.tally1),
    tallyTwoWorkersEventsPerSecond: m(rounds.tally2),
    bareWorkerEventsPerSecond: m(rounds.bare),
    bareTwoWorkersEventsPerSecond: m(rounds.bare2),
    pgbenchCreditTps: median(rounds.pgbenchCredit.map((entry) => entry.tps)),
    pgbenchCreditDoubledClientsTps: median(rounds.pgbenchCreditDoubled.map((entry) => entry.tps)),
    tallyWorkerPeakRssMb: Math.max(...rounds.tally1.flatMap((entry) => entry.workerPeakRssMb)),
    tallyTwoWorkersPeakRssMb: Math.max(...rounds.tally2.flatMap((entry) => entry.workerPeakRssMb)),
    bareWorkerPeakRssMb: Math.max(...rounds.bare.flatMap((entry) => entry.workerPeakRssMb)),
    // Where the time goes: CPU milliseconds per event (medians over rounds), worker and Postgres.
    cpuMsPerEvent: Object.fromEntries(
      ['tally1', 'tally2', 'bare', 'bare2'].map((target) => [
        target,
        {
          worker: median(rounds[target].map((entry) => entry.workerCpuMsPerEvent)),
          postgres: median(rounds[target].map((entry) => entry.postgresCpuMsPerEvent)),
          redis: median(rounds[target].map((entry) => entry.redisCpuMsPerEvent)),
        },
      ]),
    ),
    allCredited: [...rounds.tally1, ...rounds.tally2].every(
      (entry) => entry.notProcessed === 0 && entry.ledgerRows === entry.events,
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// End to end

async function endToEndLatency(pool, tag) {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM l.created_at - i.received_at)) * 1000 AS p50,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM l.created_at - i.received_at)) * 1000 AS p99
     FROM ledger_entries l JOIN inbox_events i ON i.id = l.inbox_event_id
     WHERE i.provider_event_id LIKE $1`,
    [`evt_${runId}${tag}_%`],
  );
  return { credited: rows[0].n, p50Ms: Number(rows[0].p50), p99Ms: Number(rows[0].p99) };
}

async function endToEndPhase() {
  const drain = results.figures.drain ?? {};
  const rate =
    settings.e2eRate ||
    Math.max(
      10,
      Math.round(
        0.5 *
          Math.min(
            drain.tallyOneWorkerEventsPerSecond || 200,
            drain.bareWorkerEventsPerSecond || 200,
            results.figures.ingest?.tallyRps || 400,
          ),
      ),
    );
  log(`end to end at ${rate} events/s`);
  const tallyDb = await resources.database('e2e-tally');
  const bareDb = await resources.database('e2e-bare');
  const tallyPrefix = resources.prefix('e2e-tally');
  const barePrefix = resources.prefix('e2e-bare');
  const tallyIngest = await startTallyIngest(tallyDb, tallyPrefix);
  const tallyWorker = startTallyWorker(tallyDb, tallyPrefix);
  const bareIngest = await startBareEndpoint('insert-add', bareDb, barePrefix);
  const bareWorkerHandle = startBareWorker(bareDb, barePrefix);
  const pipelines = {
    tally: { url: tallyIngest.url, pool: benchPool(tallyDb) },
    bare: { url: bareIngest.url, pool: benchPool(bareDb) },
  };
  const rounds = { tally: [], bare: [] };
  try {
    // Warm-up at the measured rate, every event credited, so both pipelines start their first
    // round with compiled code and open connections. (Ten events used to be the warm-up: the
    // first round then measured the JIT and connection set-up of whichever pipeline ran first,
    // with p50 over 100 ms against single digits in later rounds.)
    for (const [target, { url, pool }] of Object.entries(pipelines)) {
      const tag = `e2ewarm${target}`;
      const items = events(Math.ceil(rate * settings.e2eWarmupSeconds) + 5, 10_000, tag);
      const sent = await runOpenLoop({
        url,
        rate,
        durationSeconds: settings.e2eWarmupSeconds,
        next: openLoopRequests(items),
      });
      const deadline = Date.now() + 60_000;
      while ((await endToEndLatency(pool, tag)).credited < sent.ok && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    for (let pass = 0; pass < settings.e2eRounds; pass += 1) {
      for (const target of rotated(['tally', 'bare'], pass)) {
        const { url, pool } = pipelines[target];
        const tag = `e2e${target}${pass}`;
        const items = events(Math.ceil(rate * settings.e2eSeconds) + 5, 10_000, tag);
        // Like every other measured run: a checkpoint due in the middle of a round (the drain
        // phase before this one writes a lot of WAL) would land on one contender only.
        await checkpoint(pool);
        const sent = await runOpenLoop({
          url,
          rate,
          durationSeconds: settings.e2eSeconds,
          next: openLoopRequests(items),
        });
        const deadline = Date.now() + 60_000;
        let latency = await endToEndLatency(pool, tag);
        while (latency.credited < sent.ok && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          latency = await endToEndLatency(pool, tag);
        }
        rounds[target].push({ ...latency, accepted: sent.ok, ingestP99Ms: sent.p99 });
        log(
          `end to end round ${pass + 1}: ${target} p50 ${round(latency.p50Ms, 1)} ms, p99 ${round(latency.p99Ms, 1)} ms (${latency.credited}/${sent.ok} credited)`,
        );
      }
    }
  } finally {
    await Promise.all([
      tallyIngest.handle.stop(),
      tallyWorker.stop(),
      bareIngest.handle.stop(),
      bareWorkerHandle.stop(),
    ]);
    await Promise.all(Object.values(pipelines).map(({ pool }) => pool.end()));
  }
  results.rounds.endToEnd = rounds;
  results.figures.endToEnd = {
    rate,
    tallyP50Ms: median(rounds.tally.map((entry) => entry.p50Ms)),
    tallyP99Ms: median(rounds.tally.map((entry) => entry.p99Ms)),
    bareP50Ms: median(rounds.bare.map((entry) => entry.p50Ms)),
    bareP99Ms: median(rounds.bare.map((entry) => entry.p99Ms)),
  };
}

// ---------------------------------------------------------------------------------------------
// Report

function targets() {
  const ingest = results.figures.ingest ?? {};
  const drain = results.figures.drain ?? {};
  const e2e = results.figures.endToEnd ?? {};
  const fixedAtBare = ingest.fixedRate ?? {};
  const list = [
    ['ingest max vs bare INSERT+add', ratio(ingest.tallyRps, ingest.bareAddRps), '>=', 1.3],
    ['ingest max vs bare INSERT', ratio(ingest.tallyRps, ingest.bareInsertRps), 'report', null],
    ['ingest max vs pgbench one-row insert', ratio(ingest.tallyRps, ingest.pgbenchInsertTps), 'report', null],
    ['duplicates vs accepted (max throughput)', ratio(ingest.tallyDuplicateRps, ingest.tallyRps), '>=', 1.0],
    [
      'ingest p99 at 50% of bare max vs bare p99',
      ratio(fixedAtBare['tally@bareAt50']?.p99Ms, fixedAtBare['bareAdd@bareAt50']?.p99Ms),
      '<=',
      0.75,
    ],
    [
      'ingest p99 at 50% of Tally max vs bare p99 (same rate)',
      ratio(fixedAtBare['tally@tallyAt50']?.p99Ms, fixedAtBare['bareAdd@tallyAt50']?.p99Ms),
      'report',
      null,
    ],
    [
      'drain (1 worker) vs bare BullMQ worker',
      ratio(drain.tallyOneWorkerEventsPerSecond, drain.bareWorkerEventsPerSecond),
      '>=',
      1.0,
    ],
    [
      'drain (1 worker) vs pgbench credit tx',
      ratio(drain.tallyOneWorkerEventsPerSecond, drain.pgbenchCreditTps),
      '>=',
      0.4,
    ],
    [
      'drain 2 workers vs 1 worker',
      ratio(drain.tallyTwoWorkersEventsPerSecond, drain.tallyOneWorkerEventsPerSecond),
      '>',
      1.0,
    ],
    [
      'bare worker: 2 processes vs 1 (what the machine allows)',
      ratio(drain.bareTwoWorkersEventsPerSecond, drain.bareWorkerEventsPerSecond),
      'report',
      null,
    ],
    [
      `pgbench credit tx: ${settings.workerConcurrency * 2} clients vs ${settings.workerConcurrency}`,
      ratio(drain.pgbenchCreditDoubledClientsTps, drain.pgbenchCreditTps),
      'report',
      null,
    ],
    ['end to end p99 vs bare pipeline', ratio(e2e.tallyP99Ms, e2e.bareP99Ms), '<=', 1.5],
  ];
  const absolute = [
    ['ingest peak RSS (MB)', ingest.tallyIngestPeakRssMb, '<=', 200],
    [
      'worker peak RSS (MB)',
      Math.max(drain.tallyWorkerPeakRssMb ?? Number.NaN, drain.tallyTwoWorkersPeakRssMb ?? Number.NaN),
      '<=',
      300,
    ],
  ];
  const check = ([name, value, op, bound]) => ({
    name,
    value: round(value, 2),
    target: bound === null ? 'report only' : `${op} ${bound}`,
    met:
      bound === null || !Number.isFinite(value)
        ? null
        : op === '>='
          ? value >= bound
          : op === '>'
            ? value > bound
            : value <= bound,
  });
  return [...list, ...absolute].map(check);
}

function report() {
  const ingest = results.figures.ingest ?? {};
  const drain = results.figures.drain ?? {};
  const e2e = results.figures.endToEnd ?? {};
  const fixed = ingest.fixedRate ?? {};
  const f = (value, digits = 0) => (Number.isFinite(value) ? String(round(value, digits)) : 'n/a');
  const rows = [
    [
      `Tally bench (${settings.profile}): ${settings.rounds} alternating ingest round(s), medians; ${settings.drainRounds} drain round(s)`,
    ],
    [
      'machine',
      `${results.machine.cpus} CPU`,
      `${results.machine.cpuModel}; load average at start ${results.machine.loadAverageAtStart.join(' ')}, at end ${results.machine.loadAverageAtEnd?.join(' ')}`,
    ],
    [
      'Tally processes',
      '',
      Object.entries(tallyEnvironment)
        .map(([key, value]) => `${key}=${value}`)
        .join(' '),
    ],
    ['Ingest: max throughput, signed Stripe events 2-4 KB, closed loop'],
    ['pgbench one-row insert', f(ingest.pgbenchInsertTps), `tps (${settings.pgbenchClients} clients, -j 2)`],
    ['bare Express INSERT', f(ingest.bareInsertRps), `req/s (${settings.connections} connections)`],
    ['bare Express INSERT + BullMQ add', f(ingest.bareAddRps), 'req/s'],
    [
      'Tally ingest (accepted)',
      f(ingest.tallyRps),
      `req/s; closed-loop p50 ${f(ingest.tallyClosedLoopP50Ms)} ms, p99 ${f(ingest.tallyClosedLoopP99Ms)} ms`,
    ],
    [
      'Tally ingest (duplicates)',
      f(ingest.tallyDuplicateRps),
      `req/s; closed-loop p50 ${f(ingest.tallyDuplicateClosedLoopP50Ms)} ms, p99 ${f(ingest.tallyDuplicateClosedLoopP99Ms)} ms`,
    ],
    ['Ingest: fixed rate, open loop, latency from the scheduled send time (ms)'],
    ...Object.entries(fixed).map(([key, value]) => [
      `${key} (${value.rate}/s)`,
      `p50 ${f(value.p50Ms, 1)}`,
      `p99 ${f(value.p99Ms, 1)}  p99.9 ${f(value.p999Ms, 1)}  (non-200/errors: ${value.non200})`,
    ]),
    ['Tally ingest peak RSS', f(ingest.tallyIngestPeakRssMb), `MB (bare INSERT+add: ${f(ingest.bareAddPeakRssMb)} MB)`],
    [
      `Drain: ${drain.events ?? settings.drainEvents} token-pack events over ${drain.users ?? settings.drainUsers} users (first to last processed_at)`,
    ],
    [
      'Tally, 1 worker process',
      f(drain.tallyOneWorkerEventsPerSecond),
      `events/s (concurrency ${settings.workerConcurrency}); peak RSS ${f(drain.tallyWorkerPeakRssMb)} MB`,
    ],
    [
      'Tally, 2 worker processes',
      f(drain.tallyTwoWorkersEventsPerSecond),
      `events/s; peak RSS ${f(drain.tallyTwoWorkersPeakRssMb)} MB each at most`,
    ],
    [
      'bare BullMQ worker, same SQL',
      f(drain.bareWorkerEventsPerSecond),
      `events/s (concurrency ${settings.workerConcurrency}); peak RSS ${f(drain.bareWorkerPeakRssMb)} MB`,
    ],
    [
      'bare BullMQ worker, 2 processes',
      f(drain.bareTwoWorkersEventsPerSecond),
      `events/s (concurrency ${settings.workerConcurrency} each)`,
    ],
    ['pgbench credit transaction', f(drain.pgbenchCreditTps), `tps (${settings.workerConcurrency} clients)`],
    [
      'pgbench credit transaction',
      f(drain.pgbenchCreditDoubledClientsTps),
      `tps (${settings.workerConcurrency * 2} clients)`,
    ],
    ...['tally1', 'tally2', 'bare', 'bare2'].map((target) => [
      `CPU per event, ${{ tally1: 'Tally 1 worker', tally2: 'Tally 2 workers', bare: 'bare worker', bare2: 'bare, 2 processes' }[target]}`,
      f(drain.cpuMsPerEvent?.[target]?.worker, 3),
      `ms in the worker process(es), ${f(drain.cpuMsPerEvent?.[target]?.postgres, 3)} ms in Postgres, ${f(drain.cpuMsPerEvent?.[target]?.redis, 3)} ms in Redis`,
    ]),
    ['every Tally event credited once', String(drain.allCredited), ''],
    [`End to end at ${e2e.rate ?? 'n/a'} events/s: inbox received_at -> ledger created_at (Postgres clock)`],
    ['Tally', `p50 ${f(e2e.tallyP50Ms, 1)}`, `p99 ${f(e2e.tallyP99Ms, 1)} ms`],
    ['bare pipeline', `p50 ${f(e2e.bareP50Ms, 1)}`, `p99 ${f(e2e.bareP99Ms, 1)} ms`],
    ['Targets (ratios from this run)'],
    ...results.targets.map((t) => [
      t.name,
      f(t.value, 2),
      `${t.target}${t.met === null ? '' : t.met ? '  met' : '  MISSED'}`,
    ]),
  ];
  return formatTable(rows);
}

async function main() {
  const only = new Set((process.env.BENCH_ONLY ?? 'ingest,drain,e2e').split(','));
  log(`profile ${settings.profile}; run ${runId}; Tally processes with ${JSON.stringify(tallyEnvironment)}`);
  await resources.prepareTemplate();
  if (only.has('ingest')) await ingestPhase();
  if (only.has('drain')) await drainPhase();
  if (only.has('e2e')) await endToEndPhase();
  results.machine.loadAverageAtEnd = os.loadavg().map((value) => round(value, 2));
  results.durationSeconds = round((Date.now() - startedAt) / 1000);
  results.targets = targets();
  console.log(report());
  // A partial run (BENCH_ONLY) or a smoke run is an experiment: kept out of bench/results/.
  const complete = only.size === 3 && settings.profile === 'full';
  const dir = path.join(root, complete ? 'bench/results' : 'test-output/bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(
    dir,
    `${new Date().toISOString().replaceAll(':', '-').replace(/\..+/, '')}-${settings.profile}.json`,
  );
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${path.relative(process.cwd(), file)} (${results.durationSeconds}s)`);
}

let cleaning;
async function cleanup() {
  cleaning ??= (async () => {
    await stopAll();
    await resources.cleanup();
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    log(`${signal}: stopping children and removing bench resources`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  process.exitCode = 1;
  log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  await cleanup();
}
