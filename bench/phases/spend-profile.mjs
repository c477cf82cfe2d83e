// The spend phase's profiling pass (not for figures): where a debit's time goes beyond what
// pg_stat_statements says. Each HTTP contender (Tally's api, the minimal endpoint) is started once
// more, connected to Postgres through a counting proxy (lib/pg-wire-proxy.mjs: round trips,
// transactions, the time a transaction stays open waiting on Postgres or on the client) and with
// `--cpu-prof`, and loaded like the measured runs for one run (1,000 users; again on the hot
// wallet, without the CPU profile: there the transaction's open time is the limit); its CPU
// profile is summarized as profile-summary.mjs does (shares of the busy time, start-up and
// warm-up included).
// The proxy adds a hop to every round trip, so the pass's own rate is lower than the measured one.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { profileEnd, profileStart } from '../lib/pg-profile.mjs';
import { freePort, startNode, waitForHttp } from '../lib/processes.mjs';
import { round } from '../lib/stats.mjs';
import { root } from '../lib/workspace.mjs';
import { summarizeProfile } from '../profile-summary.mjs';
import { debitsSince, ledgerMark } from './spend-checks.mjs';

async function proxyStats(url) {
  const response = await fetch(url);
  return response.json();
}

/** The proxy in front of the database of `databaseUrl`: `{ handle, url, statsUrl }`. */
async function startProxy(databaseUrl) {
  const upstream = new URL(databaseUrl);
  const [listenPort, statsPort] = [await freePort(), await freePort()];
  const handle = startNode('pg-wire-proxy', path.join(root, 'bench/lib/pg-wire-proxy.mjs'), {
    LISTEN_PORT: String(listenPort),
    UPSTREAM_HOST: upstream.hostname,
    UPSTREAM_PORT: upstream.port || '5432',
    STATS_PORT: String(statsPort),
  });
  const statsUrl = `http://127.0.0.1:${statsPort}/stats`;
  await waitForHttp(handle, statsUrl);
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(listenPort);
  return { handle, url: proxied.toString(), statsUrl };
}

/**
 * A transaction's round trips in order: per position (0: the one that began it), the mean ms the
 * client took before it and Postgres took to answer it (the proxy's hop in both), for positions
 * most transactions reach.
 */
function timelineOf(before, after, transactions) {
  const timeline = [];
  for (let position = 0; position < after.length; position += 1) {
    const a = after[position];
    const b = before[position] ?? { roundTrips: 0, postgresMs: 0, clientMsBefore: 0 };
    const roundTrips = (a?.roundTrips ?? 0) - b.roundTrips;
    if (roundTrips < transactions / 2) continue;
    timeline.push({
      position,
      share: round(roundTrips / transactions, 2),
      clientMsBefore: round((a.clientMsBefore - b.clientMsBefore) / roundTrips, 3),
      postgresMs: round((a.postgresMs - b.postgresMs) / roundTrips, 3),
    });
  }
  return timeline;
}

/**
 * On a hot row: the round trip that waits longest on Postgres is the one that queues for the row
 * lock (`lockPosition`); every round trip after it, and the client's time before each, hold the
 * lock (`lockHeldMs`, through the commit's answer), which caps the hot wallet at 1000 / it a second.
 */
function lockHold(timeline) {
  const steps = timeline.filter((step) => step.position > 0);
  if (steps.length === 0) return { lockPosition: null, lockHeldMs: null };
  const lock = steps.reduce((worst, step) => (step.postgresMs > worst.postgresMs ? step : worst));
  const after = steps.filter((step) => step.position > lock.position);
  const held = after.reduce((sum, step) => sum + step.clientMsBefore + step.postgresMs, 0);
  return { lockPosition: lock.position, lockHeldMs: round(held, 3) };
}

/** A CPU profile's top owners and functions, as shares of its busy time (percent). */
function cpuProfileFigures(file, top) {
  const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')));
  const share = ([key, value]) => ({ name: key, sharePct: round((100 * value) / summary.total, 1) });
  return {
    busySeconds: round(summary.total / 1e6, 2),
    idleSeconds: round(summary.idle / 1e6, 2),
    byOwner: summary.byOwner.slice(0, top).map(share),
    byFunction: summary.byFunction.slice(0, top).map(share),
  };
}

/**
 * One profiled run of a contender: `start(databaseUrl, nodeFlags)` starts its server (answers
 * `{ handle, url }`), `load(url, seconds)` runs the closed loop and answers its result, `table`
 * is where its debits are written (figures are per debit written); `cpuProfile`: with `--cpu-prof`.
 */
async function profileContender(ctx, pool, databaseUrl, contender) {
  const { name, start, load, table, cpuProfile, seconds, warmupSeconds } = contender;
  const proxy = await startProxy(databaseUrl);
  const dir = mkdtempSync(path.join(tmpdir(), `tally-bench-cpuprof-${name}-`));
  let server;
  try {
    server = await start(proxy.url, cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);
    if (warmupSeconds > 0) await load(server.url, warmupSeconds);
    const mark = await ledgerMark(pool, table);
    const before = await proxyStats(proxy.statsUrl);
    const profile = await profileStart(ctx.postgres, pool);
    const run = await load(server.url, seconds);
    const debits = await debitsSince(pool, table, mark);
    const pg = await profileEnd(profile, pool, debits, table, { awaitDisconnect: false });
    const after = await proxyStats(proxy.statsUrl);
    await server.handle.stop();
    const delta = (key) => after[key] - before[key];
    const file = readdirSync(dir).find((entry) => entry.endsWith('.cpuprofile'));
    const timeline = timelineOf(before.positions, after.positions, delta('transactions'));
    return {
      debitsPerSecond: round(run.rps),
      roundTripsPerDebit: round(delta('roundTrips') / debits, 2),
      roundTripsInTransactionPerDebit: round(delta('roundTripsInTransaction') / debits, 2),
      topLevelStatementsPerDebit: pg.topLevelStatementsPerEvent,
      transactionsPerDebit: round(delta('transactions') / debits, 2),
      // A transaction open (its row locks held), mean per transaction: waiting on Postgres (the
      // proxy's hop included) and the client's own time between its round trips.
      transactionMs: round(delta('transactionMs') / delta('transactions'), 3),
      postgresMsInTransaction: round(delta('postgresMsInTransaction') / delta('transactions'), 3),
      clientMsInTransaction: round(delta('clientMsInTransaction') / delta('transactions'), 3),
      timeline,
      ...lockHold(timeline),
      cpuProfile: file ? cpuProfileFigures(path.join(dir, file), 15) : null,
    };
  } finally {
    await server?.handle.stop();
    await proxy.handle.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The pass over the contenders (`{ name: { start, load } }`) on the phase's database
 * (`databaseUrl`, proxied; `pool`, the bench's own on it); answers their figures by name.
 */
export async function profileSpend(ctx, pool, databaseUrl, contenders, { seconds, warmupSeconds }) {
  const figures = {};
  for (const [name, contender] of Object.entries(contenders)) {
    figures[name] = await profileContender(ctx, pool, databaseUrl, { name, ...contender, seconds, warmupSeconds });
    const f = figures[name];
    ctx.log(
      `spend profile ${name}: ${f.debitsPerSecond} debits/s through the proxy; per debit ${f.roundTripsPerDebit} round trips (${f.topLevelStatementsPerDebit ?? 'n/a'} statements), ${f.transactionsPerDebit} transactions open ${f.transactionMs} ms (Postgres ${f.postgresMsInTransaction}, client ${f.clientMsInTransaction}); top functions ${f.cpuProfile?.byFunction
        .slice(0, 3)
        .map((entry) => `${entry.name} ${entry.sharePct} %`)
        .join(', ')}`,
    );
  }
  return figures;
}
