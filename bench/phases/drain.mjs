// Drain: a backlog stored through ingest with no worker running, then drained by ONE Tally worker
// process and (on a fresh database) by TWO, against the bare BullMQ worker running the same SQL
// (in one and two processes) and pgbench running the credit transaction (8 and 16 clients), with
// peak RSS and CPU per event in the workers, Postgres and Redis. Returns its rounds and figures.

import { readFileSync } from 'node:fs';
import { alternated } from '../context.mjs';
import { runClosedLoop } from '../lib/closed-loop.mjs';
import { fillMinimalBacklog, minimalCreditScript } from '../lib/minimal-inbox.mjs';
import { liveBackendCpuSeconds, profileEnd, profileStart, sampleBusyConnections } from '../lib/pg-profile.mjs';
import { creditScript, runPgbench } from '../lib/pgbench.mjs';
import { machineBusyCpuSeconds } from '../lib/processes.mjs';
import { benchPool } from '../lib/resources.mjs';
import { revenueCatTokenPackEvents } from '../lib/revenuecat-events.mjs';
import { median, round } from '../lib/stats.mjs';
import { stripeTokenPackEvent } from '../lib/stripe-events.mjs';
import { bullmq, Redis } from '../lib/workspace.mjs';

/**
 * Waits until `expected` rows are finished. Returns the workers' CPU seconds and the finished
 * count at the first poll that found one finished: the workers' CPU per event is counted from
 * there, so a process's start-up (loading its modules, opening its pools) is not counted as work
 * per event (it is a fixed cost, a second for Tally's worker, which a 100-event smoke drain would
 * otherwise spread over every event).
 */
async function waitForProcessed(pool, expected, what, timeoutMs, table = 'inbox_events', handles = []) {
  const deadline = Date.now() + timeoutMs;
  let first;
  let previous;
  for (;;) {
    const { rows } = await pool.query(
      `SELECT count(*) FILTER (WHERE status IN ('processed', 'ignored'))::int AS done, count(*) FILTER (WHERE status = 'failed')::int AS failed FROM ${table}`,
    );
    const now = Date.now();
    if (first === undefined && rows[0].done > 0) {
      first = { done: rows[0].done, cpuSeconds: handles.reduce((sum, handle) => sum + handle.cpuSeconds(), 0) };
    }
    if (rows[0].done + rows[0].failed >= expected) return { ...rows[0], first };
    const dead = handles.find((handle) => handle.exited);
    if (dead) throw new Error(`${what}: ${dead.name} exited before the drain ended:\n${dead.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: only ${rows[0].done} of ${expected} processed in time`);
    // Each count reads the whole table, and on the private cluster its CPU is part of what is
    // measured (a Tally inbox row is larger than a minimal one, so the count cost Tally more:
    // 38 against 11 µs per event at one count every 500 ms). Count about twice per remaining
    // half: at most every 2 s while far from the end, more often near it (not under 100 ms).
    const rate = previous && now > previous.at ? (rows[0].done - previous.done) / (now - previous.at) : 0;
    const remaining = expected - rows[0].done - rows[0].failed;
    const wait = rate > 0 ? Math.min(2_000, Math.max(100, remaining / rate / 2)) : 500;
    previous = { at: now, done: rows[0].done };
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/**
 * CPU seconds the Redis server has used so far (INFO cpu, user + sys, main and child threads).
 * Redis is shared with nothing else during a bench run, so the difference over a drain is the
 * drain's: the queue's share of "where the time goes".
 */
export async function redisCpuSeconds(redisUrl) {
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

async function drainCpu(ctx, pool, handles, events, redisCpuAtStart, first) {
  const postgres = await liveBackendCpuSeconds(pool);
  const workers = handles.reduce((sum, handle) => sum + handle.cpuSeconds(), 0);
  const redis = (await redisCpuSeconds(ctx.redisUrl)) - redisCpuAtStart;
  // The workers' CPU from the first finished event on (see waitForProcessed), over the events after it.
  const counted =
    first && events > first.done ? { cpu: workers - first.cpuSeconds, events: events - first.done } : null;
  return {
    workerCpuMsPerEvent: round(counted ? (counted.cpu * 1000) / counted.events : (workers * 1000) / events, 3),
    postgresCpuMsPerEvent: round((postgres * 1000) / events, 3),
    redisCpuMsPerEvent: round((redis * 1000) / events, 3),
  };
}

async function drainRate(pool, table = 'inbox_events') {
  const { rows } = await pool.query(`SELECT count(*)::int AS n,
      extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds,
      count(*) FILTER (WHERE status <> 'processed')::int AS not_processed,
      (SELECT count(*)::int FROM ledger_entries) AS ledger_rows,
      (SELECT coalesce(sum(balance), 0)::float8 FROM wallets) AS balance
    FROM ${table}`);
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

const drainTimeoutMs = (settings) => Math.max(120_000, settings.drainEvents * 20);

/** The private cluster's per-event profile; its CPU (the whole cluster's) replaces the live backends'. */
async function withProfile(profile, pool, rate, table) {
  const figures = await profileEnd(profile, pool, rate.events, table);
  return figures.clusterCpuMsPerEvent === undefined
    ? figures
    : { ...figures, postgresCpuMsPerEvent: figures.clusterCpuMsPerEvent };
}

function logDrain(log, label, rate) {
  log(
    `drain ${label}: ${round(rate.eventsPerSecond)} events/s; ledger rows ${rate.ledgerRows}, not processed ${rate.notProcessed}; CPU ms/event worker ${rate.workerCpuMsPerEvent}, Postgres ${rate.postgresCpuMsPerEvent}, Redis ${rate.redisCpuMsPerEvent}; WAL ${rate.walBytesPerEvent ?? 'n/a'} B/event, inbox updates ${rate.inboxUpdatesPerEvent ?? 'n/a'} (HOT ${rate.inboxHotUpdatesPerEvent ?? 'n/a'}) per event`,
  );
}

/**
 * The minimal same-guarantee worker (baselines/minimal-worker.mjs) draining a backlog of the
 * flow in its own one-index inbox, in one process at `concurrency` (the baselines' 8, or 32:
 * the drain's figure is the better of the two).
 */
async function minimalDrain(ctx, label, flow, concurrency) {
  const { settings, resources, log, checkpoint, redisUrl } = ctx;
  const databaseUrl = await resources.database(label);
  const prefix = resources.prefix(label);
  const pool = benchPool(databaseUrl);
  try {
    await fillMinimalBacklog({
      pool,
      redisUrl,
      prefix,
      flow,
      events: settings.drainEvents,
      users: settings.drainUsers,
      body: stripeTokenPackEvent({ eventId: 'evt_min', paymentIntentId: 'pi_min', userId: 'bench-user-0' }),
      withJobs: true,
    });
    await checkpoint(pool);
    log(
      `drain ${label}: ${settings.drainEvents} rows and jobs written; starting the minimal ${flow} worker (concurrency ${concurrency})`,
    );
    const redisCpuAtStart = await redisCpuSeconds(ctx.redisUrl);
    const profile = await profileStart(ctx.postgres, pool);
    const handle = ctx.startMinimalWorker(databaseUrl, prefix, flow, concurrency);
    const { first } = await waitForProcessed(
      pool,
      settings.drainEvents,
      label,
      drainTimeoutMs(settings),
      'minimal_inbox',
      [handle],
    );
    const rate = await drainRate(pool, 'minimal_inbox');
    rate.concurrency = concurrency;
    rate.workerPeakRssMb = [handle.peakRssMb()];
    Object.assign(rate, await drainCpu(ctx, pool, [handle], rate.events, redisCpuAtStart, first));
    await handle.stop();
    Object.assign(rate, await withProfile(profile, pool, rate, 'minimal_inbox'));
    logDrain(log, label, rate);
    return rate;
  } finally {
    await pool.end();
  }
}

/**
 * pgbench running the minimal worker's transaction on the same backlog (8 clients, each row once):
 * what Postgres itself does per event with the fewest statements that keep the guarantees.
 */
async function minimalPgbench(ctx, label, flow) {
  const { settings, resources, log, checkpoint } = ctx;
  const databaseUrl = await resources.database(label);
  const pool = benchPool(databaseUrl);
  const clients = settings.workerConcurrency;
  const events = Math.floor(settings.drainEvents / clients) * clients;
  try {
    await fillMinimalBacklog({
      pool,
      flow,
      events,
      users: settings.drainUsers,
      body: stripeTokenPackEvent({ eventId: 'evt_min', paymentIntentId: 'pi_min', userId: 'bench-user-0' }),
      withJobs: false,
    });
    await checkpoint(pool);
    const profile = await profileStart(ctx.postgres, pool);
    const result = await runPgbench({
      url: databaseUrl,
      script: minimalCreditScript(flow),
      clients,
      transactions: events / clients,
      defines: { n: 0, clients, users: settings.drainUsers },
    });
    const done = (await pool.query("SELECT count(*)::int AS n FROM minimal_inbox WHERE status = 'processed'")).rows[0]
      .n;
    const figures = await withProfile(profile, pool, { events }, 'minimal_inbox');
    log(
      `drain ${label}: pgbench minimal ${flow} transaction, ${clients} clients: ${round(result.tps)} tps, ${done}/${events} processed; Postgres ${figures.postgresCpuMsPerEvent ?? 'n/a'} ms/event, WAL ${figures.walBytesPerEvent ?? 'n/a'} B/event${result.error ? ` (${result.error})` : ''}`,
    );
    return { ...result, events, processed: done, ...figures };
  } finally {
    await pool.end();
  }
}

/**
 * A drain target as BENCH_DRAIN_TARGETS names it (experiments only): `tally1`, or a variant of a
 * Tally target, `tally1@KEY=VALUE+KEY=VALUE`: the same drain with that environment added to
 * Tally's worker, `ROOT=<checkout>` running the built worker of another checkout (an A/B of two
 * builds in one run), `SQL=<file>` run in the variant's database before its backlog is stored. Variants are reported by their whole name, next to the plain targets.
 */
export function parseDrainTarget(name) {
  const at = name.indexOf('@');
  if (at < 0) return { name, base: name, env: {}, checkout: undefined };
  const env = Object.fromEntries(
    name
      .slice(at + 1)
      .split('+')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  const { ROOT: checkout, SQL: sqlFile, ...rest } = env;
  return { name, base: name.slice(0, at), env: rest, checkout, sql: sqlFile };
}

/**
 * Tally's worker(s) draining a backlog stored through ingest. `options` (other phases): the
 * backlog's size (`events`, `users`; default the drain's), extra environment for the workers
 * (`workerEnv`), and `afterDrain({databaseUrl, prefix, pool})`, run once the workers stopped,
 * whose figures are kept as the round's `afterDrain`; a BENCH_DRAIN_TARGETS variant's fields
 * (parseDrainTarget: `env`, `checkout`, `sql`). Besides the drain's rate and CPU per event, the
 * fill's: ingest's, Postgres's and Redis's CPU per event and the connections busy (capacity.mjs).
 */
export async function tallyDrain(ctx, label, workers, flow = 'stripe', options = {}) {
  const { settings, resources, log, events, checkpoint } = ctx;
  const count = options.events ?? settings.drainEvents;
  const users = options.users ?? settings.drainUsers;
  const databaseUrl = await resources.database(label);
  if (options.sql) {
    // A variant's SQL (experiments only: an index or storage change), before anything is stored.
    const setup = benchPool(databaseUrl);
    await setup.query(readFileSync(options.sql, 'utf8')).finally(() => setup.end());
  }
  const prefix = resources.prefix(label);
  const ingest = await ctx.startTallyIngest(databaseUrl, prefix);
  const items =
    flow === 'stripe' ? events(count, users) : revenueCatTokenPackEvents({ tag: `${ctx.runId}${label}`, count, users });
  const pool = benchPool(databaseUrl);
  try {
    // The fill is ingest at its maximum (closed loop): its CPU per event, ingest's, Postgres's
    // (the private cluster's) and Redis's, and the connections it kept busy (capacity.mjs).
    const ingestCpuAtStart = ingest.handle.cpuSeconds();
    const ingestRedisCpuAtStart = await redisCpuSeconds(ctx.redisUrl);
    const postgresCpuAtStart = ctx.postgres?.cpuSeconds() ?? Number.NaN;
    const ingestBusy = sampleBusyConnections(pool);
    const fill = await runClosedLoop({
      url: flow === 'stripe' ? ingest.url : ingest.revenueCatUrl,
      connections: settings.connections,
      amount: items.length,
      items,
      headers: flow === 'stripe' ? {} : { authorization: ingest.revenueCatAuthorization },
    });
    const ingestFigures = {
      ingestRps: fill.rps,
      ingestCpuMsPerEvent: round(((ingest.handle.cpuSeconds() - ingestCpuAtStart) * 1000) / fill.ok, 3),
      ingestPostgresCpuMsPerEvent: round(
        (((ctx.postgres?.cpuSeconds() ?? Number.NaN) - postgresCpuAtStart) * 1000) / fill.ok,
        3,
      ),
      ingestRedisCpuMsPerEvent: round(
        (((await redisCpuSeconds(ctx.redisUrl)) - ingestRedisCpuAtStart) * 1000) / fill.ok,
        3,
      ),
      ingestBusyConnections: await ingestBusy.stop(),
    };
    await ingest.handle.stop();
    const stored = (await pool.query('SELECT count(*)::int AS n FROM inbox_events')).rows[0].n;
    await checkpoint(pool);
    log(`drain ${label}: ${stored} events stored through ingest (${round(fill.rps)}/s); starting ${workers} worker(s)`);
    const redisCpuAtStart = await redisCpuSeconds(ctx.redisUrl);
    const profile = await profileStart(ctx.postgres, pool);
    const drainStarted = { wall: Date.now(), machine: machineBusyCpuSeconds(), postgres: ctx.postgres?.cpuSeconds() };
    const drainBusy = sampleBusyConnections(pool);
    const handles = Array.from({ length: workers }, (_, index) =>
      // RevenueCat packs: without the REST read of the purchase (REVENUECAT_VERIFY_PURCHASES=false;
      // it runs before the transaction, against RevenueCat, and the minimal worker has none), so
      // the drain compares the database work; production also writes the verified-purchase row.
      ctx.startTallyWorker(
        databaseUrl,
        prefix,
        `tally-worker-${index + 1}`,
        {
          ...(flow === 'revenuecat' ? { REVENUECAT_VERIFY_PURCHASES: 'false' } : {}),
          ...options.env,
          ...options.workerEnv,
        },
        options.checkout,
      ),
    );
    const { first } = await waitForProcessed(pool, stored, label, drainTimeoutMs(ctx.settings), undefined, handles);
    const drainBusyConnections = await drainBusy.stop();
    const wallSeconds = (Date.now() - drainStarted.wall) / 1000;
    // How much of the machine was busy during the drain, and how much of it was this run's own
    // processes (workers and the private cluster): the rest was other work on a shared machine.
    const machineBusyCores = round((machineBusyCpuSeconds() - drainStarted.machine) / wallSeconds, 2);
    const runCores = round(
      (handles.reduce((sum, handle) => sum + handle.cpuSeconds(), 0) +
        ((ctx.postgres?.cpuSeconds() ?? Number.NaN) - drainStarted.postgres)) /
        wallSeconds,
      2,
    );
    const rate = await drainRate(pool);
    Object.assign(rate, ingestFigures, { drainBusyConnections, machineBusyCores, runCores });
    rate.workerPeakRssMb = handles.map((handle) => handle.peakRssMb());
    Object.assign(rate, await drainCpu(ctx, pool, handles, rate.events, redisCpuAtStart, first));
    await Promise.all(handles.map((handle) => handle.stop()));
    Object.assign(rate, await withProfile(profile, pool, rate, 'inbox_events'));
    logDrain(log, label, rate);
    if (options.afterDrain) rate.afterDrain = await options.afterDrain({ databaseUrl, prefix, pool });
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
export async function bareDrain(ctx, label, workers = 1, options = {}) {
  const { settings, resources, log, checkpoint, redisUrl } = ctx;
  const count = options.events ?? settings.drainEvents;
  const users = options.users ?? settings.drainUsers;
  const databaseUrl = await resources.database(label);
  const prefix = resources.prefix(label);
  const pool = benchPool(databaseUrl);
  const body = stripeTokenPackEvent({ eventId: 'evt_bare', paymentIntentId: 'pi_bare', userId: 'bench-user-0' });
  try {
    // The same backlog shape as Tally's (rows written directly: only the drain is measured).
    await pool.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, user_id, provider_customer_id, provider_payment_intent_id, raw_body, enqueued_at)
       SELECT 'stripe', 'evt_bare_' || g, 'payment_intent.succeeded', false, 'sandbox', 'bench-user-' || (g % $2), 'cus_bench' || (g % $2), 'pi_bare_' || g, $3, now()
       FROM generate_series(0, $1 - 1) AS g`,
      [count, users, body],
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
    const redisCpuAtStart = await redisCpuSeconds(ctx.redisUrl);
    const profile = await profileStart(ctx.postgres, pool);
    const handles = Array.from({ length: workers }, () => ctx.startBareWorker(databaseUrl, prefix));
    const { first } = await waitForProcessed(pool, ids.length, label, drainTimeoutMs(ctx.settings), undefined, handles);
    const rate = await drainRate(pool);
    rate.workerPeakRssMb = handles.map((handle) => handle.peakRssMb());
    Object.assign(rate, await drainCpu(ctx, pool, handles, rate.events, redisCpuAtStart, first));
    await Promise.all(handles.map((handle) => handle.stop()));
    Object.assign(rate, await withProfile(profile, pool, rate, 'inbox_events'));
    logDrain(log, label, rate);
    // Other phases (options.pgbench false) take the drain alone.
    if (workers !== 1 || options.pgbench === false) return { bare: rate };
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

/**
 * Each round's figures of the drains, in round order (`rounds.drain` of a result): the rate and
 * CPU targets take the median of the rounds' own ratios (report.mjs). The minimal worker's is the
 * better of its two concurrencies in that round.
 */
export function drainByRound(rounds) {
  const rates = (list = []) => list.map((entry) => entry.eventsPerSecond);
  const tps = (list = []) => list.map((entry) => entry.tps);
  const better = (low = [], high = []) =>
    Array.from({ length: Math.max(low.length, high.length) }, (_, pass) => {
      const found = [low[pass]?.eventsPerSecond, high[pass]?.eventsPerSecond].filter(Number.isFinite);
      return found.length === 0 ? Number.NaN : Math.max(...found);
    });
  const postgres = (list = []) => list.map((entry) => entry.postgresCpuMsPerEvent);
  return {
    tallyOneWorkerEventsPerSecond: rates(rounds.tally1),
    tallyTwoWorkersEventsPerSecond: rates(rounds.tally2),
    bareWorkerEventsPerSecond: rates(rounds.bare),
    bareTwoWorkersEventsPerSecond: rates(rounds.bare2),
    pgbenchCreditTps: tps(rounds.pgbenchCredit),
    pgbenchCreditDoubledClientsTps: tps(rounds.pgbenchCreditDoubled),
    tallyRevenueCatEventsPerSecond: rates(rounds.tallyRevenueCat),
    minimalStripeEventsPerSecond: better(rounds.minimalStripe, rounds.minimalStripeHigh),
    minimalRevenueCatEventsPerSecond: better(rounds.minimalRevenueCat, rounds.minimalRevenueCatHigh),
    pgbenchMinimalStripeTps: tps(rounds.pgbenchMinimalStripe),
    pgbenchMinimalRevenueCatTps: tps(rounds.pgbenchMinimalRevenueCat),
    'postgresCpuMsPerEvent.tally1': postgres(rounds.tally1),
    'postgresCpuMsPerEvent.tallyRevenueCat': postgres(rounds.tallyRevenueCat),
    'postgresCpuMsPerEvent.pgbenchMinimalStripe': postgres(rounds.pgbenchMinimalStripe),
    'postgresCpuMsPerEvent.pgbenchMinimalRevenueCat': postgres(rounds.pgbenchMinimalRevenueCat),
  };
}

export async function drainPhase(ctx) {
  const { settings } = ctx;
  const rounds = {
    tally1: [],
    tally2: [],
    bare: [],
    bare2: [],
    pgbenchCredit: [],
    pgbenchCreditDoubled: [],
    tallyRevenueCat: [],
    minimalStripe: [],
    minimalRevenueCat: [],
    minimalStripeHigh: [],
    minimalRevenueCatHigh: [],
    pgbenchMinimalStripe: [],
    pgbenchMinimalRevenueCat: [],
  };
  // Each contender next to what it is compared with (context.mjs alternated keeps neighbours
  // together in every round): Tally's one worker beside the minimal worker at concurrency 8 (the
  // better one so far) and at 32, pgbench's minimal transaction, its two workers and the bare
  // worker; the bare worker beside its second process; the RevenueCat pack contenders together.
  const all = [
    'pgbenchMinimalStripe',
    'minimalStripeHigh',
    'minimalStripe',
    'tally1',
    'tally2',
    'bare',
    'bare2',
    'tallyRevenueCat',
    'minimalRevenueCat',
    'minimalRevenueCatHigh',
    'pgbenchMinimalRevenueCat',
  ];
  const unknown = (settings.drainTargets ?? []).filter((target) => !all.includes(parseDrainTarget(target).base));
  // A misspelt target used to be dropped without a word, and an experiment ran without it.
  if (unknown.length > 0)
    throw new Error(`BENCH_DRAIN_TARGETS: unknown ${unknown.join(', ')}; known: ${all.join(', ')}`);
  const chosen = settings.drainTargets ?? all;
  const variants = {};
  for (let pass = 0; pass < settings.drainRounds; pass += 1) {
    for (const target of alternated(chosen, pass)) {
      const variant = parseDrainTarget(target);
      if (variant.name !== variant.base) {
        if (!['tally1', 'tally2', 'tallyRevenueCat'].includes(variant.base)) {
          throw new Error(`drain variant ${target}: only Tally's targets take variants`);
        }
        const flow = variant.base === 'tallyRevenueCat' ? 'revenuecat' : 'stripe';
        const workers = variant.base === 'tally2' ? 2 : 1;
        variants[target] ??= [];
        variants[target].push(
          await tallyDrain(ctx, `drain-variant${chosen.indexOf(target)}-${pass}`, workers, flow, variant),
        );
      } else if (target === 'tallyRevenueCat') {
        rounds[target].push(await tallyDrain(ctx, `drain-tallyrc-${pass}`, 1, 'revenuecat'));
      } else if (target.startsWith('minimal')) {
        const flow = target.startsWith('minimalStripe') ? 'stripe' : 'revenuecat';
        const concurrency = target.endsWith('High') ? settings.minimalHighConcurrency : settings.workerConcurrency;
        rounds[target].push(await minimalDrain(ctx, `drain-min-${flow}-${concurrency}-${pass}`, flow, concurrency));
      } else if (target === 'pgbenchMinimalStripe' || target === 'pgbenchMinimalRevenueCat') {
        const flow = target === 'pgbenchMinimalStripe' ? 'stripe' : 'revenuecat';
        rounds[target].push(await minimalPgbench(ctx, `drain-pgbmin-${flow}-${pass}`, flow));
      } else if (target === 'bare') {
        const { bare, pgbench, pgbenchDoubled } = await bareDrain(ctx, `drain-bare-${pass}`);
        rounds.bare.push(bare);
        rounds.pgbenchCredit.push(pgbench);
        rounds.pgbenchCreditDoubled.push(pgbenchDoubled);
      } else if (target === 'bare2') {
        rounds.bare2.push((await bareDrain(ctx, `drain-bare2-${pass}`, 2)).bare);
      } else {
        rounds[target].push(await tallyDrain(ctx, `drain-${target}-${pass}`, target === 'tally1' ? 1 : 2));
      }
    }
  }
  const m = (list) => median(list.map((entry) => entry.eventsPerSecond));
  // The minimal worker at its better concurrency (NaN when neither ran; the one that ran otherwise).
  const better = (low, high) => {
    const rates = [m(low), m(high)].filter(Number.isFinite);
    return rates.length === 0 ? Number.NaN : Math.max(...rates);
  };
  const figures = {
    byRound: drainByRound(rounds),
    events: settings.drainEvents,
    users: settings.drainUsers,
    tallyOneWorkerEventsPerSecond: m(rounds.tally1),
    tallyTwoWorkersEventsPerSecond: m(rounds.tally2),
    bareWorkerEventsPerSecond: m(rounds.bare),
    bareTwoWorkersEventsPerSecond: m(rounds.bare2),
    pgbenchCreditTps: median(rounds.pgbenchCredit.map((entry) => entry.tps)),
    tallyRevenueCatEventsPerSecond: m(rounds.tallyRevenueCat),
    minimalStripeEventsPerSecond: better(rounds.minimalStripe, rounds.minimalStripeHigh),
    minimalRevenueCatEventsPerSecond: better(rounds.minimalRevenueCat, rounds.minimalRevenueCatHigh),
    // Both concurrencies of the minimal worker (the baselines' and minimalHighConcurrency).
    minimalEventsPerSecondByConcurrency: {
      stripe: {
        [settings.workerConcurrency]: m(rounds.minimalStripe),
        [settings.minimalHighConcurrency]: m(rounds.minimalStripeHigh),
      },
      revenueCat: {
        [settings.workerConcurrency]: m(rounds.minimalRevenueCat),
        [settings.minimalHighConcurrency]: m(rounds.minimalRevenueCatHigh),
      },
    },
    pgbenchMinimalStripeTps: median(rounds.pgbenchMinimalStripe.map((entry) => entry.tps)),
    pgbenchMinimalRevenueCatTps: median(rounds.pgbenchMinimalRevenueCat.map((entry) => entry.tps)),
    // Postgres CPU ms per event (the private cluster's, or the live backends' on a shared server).
    postgresCpuMsPerEvent: Object.fromEntries(
      [
        'tally1',
        'tallyRevenueCat',
        'minimalStripe',
        'minimalRevenueCat',
        'minimalStripeHigh',
        'minimalRevenueCatHigh',
        'pgbenchMinimalStripe',
        'pgbenchMinimalRevenueCat',
        'bare',
      ].map((target) => [target, median(rounds[target].map((entry) => entry.postgresCpuMsPerEvent))]),
    ),
    // The private cluster's per-event profile of the first round of each (WAL, inbox updates and
    // how many were HOT, statements): where Tally's Postgres time goes.
    profile: Object.fromEntries(
      Object.entries(rounds)
        .filter(([, list]) => list[0]?.walBytesPerEvent !== undefined)
        .map(([target, list]) => [
          target,
          {
            walBytesPerEvent: list[0].walBytesPerEvent,
            statementsPerEvent: list[0].statementsPerEvent,
            inboxUpdatesPerEvent: list[0].inboxUpdatesPerEvent,
            inboxHotUpdatesPerEvent: list[0].inboxHotUpdatesPerEvent,
            autovacuumRuns: list[0].autovacuumRuns,
            statements: list[0].statements,
          },
        ]),
    ),
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
    // Experiments (BENCH_DRAIN_TARGETS variants): each variant's median figures.
    variants: Object.fromEntries(
      Object.entries(variants).map(([name, list]) => [
        name,
        {
          eventsPerSecond: m(list),
          postgresCpuMsPerEvent: median(list.map((entry) => entry.postgresCpuMsPerEvent)),
          workerCpuMsPerEvent: median(list.map((entry) => entry.workerCpuMsPerEvent)),
          walBytesPerEvent: list[0].walBytesPerEvent,
          statementsPerEvent: list[0].statementsPerEvent,
          statements: list[0].statements,
        },
      ]),
    ),
    allCredited: [
      ...rounds.tally1,
      ...rounds.tally2,
      ...rounds.tallyRevenueCat,
      ...Object.values(variants).flat(),
    ].every((entry) => entry.notProcessed === 0 && entry.ledgerRows === entry.events),
  };
  return { rounds: { drain: { ...rounds, variants } }, figures };
}
