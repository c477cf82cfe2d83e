// Spend (issue 61): the app's own spend path against what an app developer writes in an
// afternoon. On one database of its own (Tally's schema, and the minimal endpoint's two tables
// beside it: lib/minimal-spend.mjs), with users prefunded on both sides:
// - tally: Tally's built api, `POST /v1/users/{u}/debits {amount: 1, reference}`, unique
//   references, over BENCH_SPEND_USERS (1,000) users round robin, BENCH_SPEND_CONNECTIONS (32)
//   connections in a closed loop (autocannon);
// - minimal: baselines/minimal-debit.mjs, the same request with the same guarantees;
// - tallyHot, minimalHot: the same, every request on ONE wallet (its row lock is the limit);
// - pgbench, pgbenchHot: pgbench running the minimal endpoint's transaction (32 clients): the upper
//   bound of any endpoint doing that work on this machine.
// Rounds run them in the list's order and reversed (context.mjs `alternated`), each after a
// CHECKPOINT, with per debit the server's CPU and, on the private cluster, Postgres's CPU,
// statements, WAL bytes and top statements (pg_stat_statements). Then both HTTP contenders in an
// open loop at half the minimal endpoint's maximum and at half Tally's (spend-fixed-rate.mjs), and
// a profiling pass (spend-profile.mjs): round trips, the transaction's timeline, a CPU profile.
// Checks every answer, the guarantees' answers (a retry, a conflict) and that every wallet moved
// by exactly its debits. Returns its rounds and figures; spend-report.mjs prints them.
import path from 'node:path';
import { alternated } from '../context.mjs';
import { runClosedLoop } from '../lib/closed-loop.mjs';
import { createMinimalWallets, minimalDebitScript } from '../lib/minimal-spend.mjs';
import { profileEnd, profileStart } from '../lib/pg-profile.mjs';
import { runPgbench } from '../lib/pgbench.mjs';
import {
  freePort,
  machineBusyCpuSeconds,
  reapedChildrenCpuSeconds,
  startNode,
  waitForHttp,
} from '../lib/processes.mjs';
import { benchPool } from '../lib/resources.mjs';
import { median, round } from '../lib/stats.mjs';
import { prefundTallyUsers, startTallyApi } from '../lib/tally-api.mjs';
import { root } from '../lib/workspace.mjs';
import { checkGuarantees, checkWallets, debitsSince, ledgerMark, ledgerOf } from './spend-checks.mjs';
import { fixedRateFigures, runFixedRates } from './spend-fixed-rate.mjs';
import { profileSpend } from './spend-profile.mjs';

/** This phase's settings (environment; bench/README.md lists them). */
export function readSpendSettings(env, profile) {
  const smoke = profile === 'smoke';
  const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
  return {
    connections: num('BENCH_SPEND_CONNECTIONS', 32),
    users: num('BENCH_SPEND_USERS', 1000),
    seconds: num('BENCH_SPEND_SECONDS', smoke ? 1 : 8),
    fixedSeconds: num('BENCH_SPEND_FIXED_SECONDS', smoke ? 1 : 6),
    // Each open-loop run's warm-up at its rate, left out of its figures (spend-fixed-rate.mjs).
    fixedWarmupSeconds: num('BENCH_SPEND_FIXED_WARMUP_SECONDS', smoke ? 0 : 1),
    rounds: num('BENCH_SPEND_ROUNDS', smoke ? 1 : 3),
    warmupSeconds: smoke ? 0.5 : 2,
    // 0: no profiling pass (it takes one run per HTTP contender).
    profilePass: env.BENCH_SPEND_PROFILE !== '0',
  };
}

const targets = ['tally', 'minimal', 'tallyHot', 'minimalHot', 'pgbench', 'pgbenchHot'];

async function startMinimalDebit(databaseUrl, appKey, nodeFlags = []) {
  const port = await freePort();
  const handle = startNode(
    'minimal-debit',
    path.join(root, 'bench/baselines/minimal-debit.mjs'),
    { PORT: String(port), DATABASE_URL: databaseUrl, APP_KEY: appKey },
    [],
    nodeFlags,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(handle, `${url}/healthz`);
  return { handle, url };
}

/** Request n of a run: a debit of 1 under `<tag>-<n>`, for the users round robin. */
function debitRequests(users, tag) {
  return (index) => ({
    path: `/v1/users/${users[index % users.length]}/debits`,
    body: JSON.stringify({ amount: 1, reference: `${tag}-${index}` }),
  });
}

export async function spendPhase(ctx) {
  const { resources, log, checkpoint, runId } = ctx;
  const settings = readSpendSettings(process.env, ctx.settings.profile);
  const appKey = `app_bench_${runId}`;
  const databaseUrl = await resources.database('spend');
  const prefix = resources.prefix('spend');
  const pool = benchPool(databaseUrl);
  const tallyUsers = await prefundTallyUsers(pool, 'spend-user', settings.users);
  const minimalUsers = await createMinimalWallets(pool, settings.users);
  const startTally = (url, extraNodeFlags) =>
    startTallyApi(ctx, { databaseUrl: url, prefix, appKey, name: 'tally-api-spend', extraNodeFlags });
  const servers = {};
  const rounds = [];
  // Debits answered 201 per side (pgbench's: its transactions), the guarantee checks' included.
  const answered = { tally: 1, minimal: 1 };
  const script = minimalDebitScript();
  try {
    servers.tally = await startTally(databaseUrl);
    servers.minimal = await startMinimalDebit(databaseUrl, appKey);
    await checkGuarantees('tally', servers.tally.url, tallyUsers[0], appKey);
    await checkGuarantees('minimal', servers.minimal.url, minimalUsers[0], appKey);
    const http = {
      tally: { server: servers.tally, users: tallyUsers },
      minimal: { server: servers.minimal, users: minimalUsers },
      tallyHot: { server: servers.tally, users: tallyUsers.slice(0, 1) },
      minimalHot: { server: servers.minimal, users: minimalUsers.slice(0, 1) },
    };
    const load = (target, url, seconds, tag) =>
      runClosedLoop({
        url,
        connections: settings.connections,
        durationSeconds: seconds,
        next: debitRequests(http[target].users, tag),
        headers: { authorization: `Bearer ${appKey}` },
      });
    log(
      `spend: debits over ${settings.users} users and on one hot wallet, ${settings.connections} connections, ${settings.rounds} round(s) of ${settings.seconds} s (Tally, the minimal endpoint, pgbench of its transaction)`,
    );
    for (const target of Object.keys(http))
      await load(target, http[target].server.url, settings.warmupSeconds, `warm-${target}`);
    let pgbenchRuns = 0;
    /** One measured run of `target`: its rate, and per debit written its CPU, statements and WAL. */
    const measure = async (target, pass) => {
      const table = ledgerOf(target);
      await checkpoint(pool);
      const mark = await ledgerMark(pool, table);
      const profile = await profileStart(ctx.postgres, pool);
      const at = {
        machine: machineBusyCpuSeconds(),
        wall: performance.now(),
        generator: process.cpuUsage(),
        pgbench: reapedChildrenCpuSeconds(),
      };
      const server = http[target]?.server;
      const serverCpuAtStart = server?.handle.cpuSeconds();
      let run;
      if (target.startsWith('pgbench')) {
        pgbenchRuns += 1;
        const result = await runPgbench({
          url: databaseUrl,
          script,
          clients: settings.connections,
          seconds: settings.seconds,
          defines: { users: target === 'pgbenchHot' ? 1 : settings.users, round: pgbenchRuns, n: 0 },
        });
        if (!Number.isFinite(result.tps) || result.failed > 0) {
          throw new Error(`spend ${target}: pgbench failed: ${result.error ?? `${result.failed} failed`}`);
        }
        run = { tps: result.tps };
      } else {
        const result = await load(target, server.url, settings.seconds, `r${pass}-${target}`);
        if (result.non2xx > 0 || result.errors > 0 || result.ok === 0) {
          throw new Error(`spend ${target}: ${result.non2xx} non-2xx answers, ${result.errors} errors of ${result.ok}`);
        }
        answered[target.replace('Hot', '')] += result.ok;
        run = { rps: result.rps, p50Ms: result.p50, p99Ms: result.p99 };
      }
      const written = await debitsSince(pool, table, mark);
      if (target.startsWith('pgbench')) answered.minimal += written;
      // Read at once: the servers keep their connections (an exited pgbench backend's CPU is its
      // zombie's until the postmaster reaps it, then the postmaster's children's).
      const figures = await profileEnd(profile, pool, written, table, { awaitDisconnect: false });
      if (server) run.serverCpuMs = ((server.handle.cpuSeconds() - serverCpuAtStart) * 1000) / written;
      else run.pgbenchTransactions = written;
      // The load generator: this process (autocannon, the open loop), or pgbench (reaped child).
      run.generatorCpuMs =
        (cpuMs(process.cpuUsage(at.generator)) + (reapedChildrenCpuSeconds() - at.pgbench) * 1000) / written;
      // The machine's busy cores meanwhile, and those of it that were not this run's (server,
      // Postgres, generator): other processes on a shared machine, which slow every figure.
      const seconds = (performance.now() - at.wall) / 1000;
      const ownMs = ((run.serverCpuMs ?? 0) + run.generatorCpuMs + (figures.clusterCpuMsPerEvent ?? 0)) * written;
      run.machineBusyCores = round((machineBusyCpuSeconds() - at.machine) / seconds, 2);
      run.otherCores = round(run.machineBusyCores - ownMs / 1000 / seconds, 2);
      return { ...run, debitsWritten: written, ...perDebit(figures) };
    };
    for (let pass = 0; pass < settings.rounds; pass += 1) {
      const runs = {};
      for (const target of alternated(targets, pass)) runs[target] = await measure(target, pass);
      rounds.push(runs);
      log(`spend round ${pass + 1}: ${targets.map((target) => describe(target, runs[target])).join('; ')}`);
    }
    const rates = Object.fromEntries(
      ['minimal', 'tally'].map((target) => [
        `${target}Half`,
        Math.max(1, Math.round(median(rounds.map((entry) => entry[target].rps)) / 2)),
      ]),
    );
    const fixed = await runFixedRates(ctx, pool, {
      rates,
      servers,
      requestsOf: (target, tag) => debitRequests(http[target].users, tag),
      appKey,
      seconds: settings.fixedSeconds,
      warmupSeconds: settings.fixedWarmupSeconds,
      rounds: settings.rounds,
      answered,
    });
    const profiling = settings.profilePass
      ? await profileSpend(
          ctx,
          pool,
          databaseUrl,
          Object.fromEntries(
            Object.keys(http).map((target) => [
              target,
              {
                start: target.startsWith('tally')
                  ? startTally
                  : (url, nodeFlags) => startMinimalDebit(url, appKey, nodeFlags),
                load: (url, seconds) => load(target, url, seconds, `p-${target}-${Date.now()}`),
                table: ledgerOf(target),
                cpuProfile: !target.endsWith('Hot'),
              },
            ]),
          ),
          { seconds: settings.seconds, warmupSeconds: settings.warmupSeconds },
        )
      : null;
    // After the profiling pass too: its debits must add up as well.
    const checks = await checkWallets(pool, answered);
    return {
      rounds: { spend: rounds, spendFixedRate: fixed },
      figures: spendFigures(settings, rounds, fixedRateFigures(fixed, rates), checks, profiling),
    };
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.handle.stop()));
    await pool.end();
  }
}

const cpuMs = (usage) => (usage.user + usage.system) / 1000;

/** A run's per-debit figures from pg-profile's per-event ones (private cluster; else n/a). */
function perDebit(figures) {
  return {
    postgresCpuMs: figures.clusterCpuMsPerEvent,
    statements: figures.statementsPerEvent,
    topLevelStatements: figures.topLevelStatementsPerEvent,
    postgresExecMs: figures.topLevelExecMsPerEvent,
    walBytes: figures.walBytesPerEvent,
    topStatements: figures.statements,
  };
}

function describe(target, run) {
  const rate = run.rps ?? run.tps;
  const cpu = run.serverCpuMs === undefined ? '' : `server ${round(run.serverCpuMs, 3)}, `;
  const p99 = run.p99Ms === undefined ? '' : ` p99 ${run.p99Ms} ms,`;
  return `${target} ${Math.round(rate)}/s,${p99} CPU ms/debit ${cpu}Postgres ${run.postgresCpuMs ?? 'n/a'}; ${run.topLevelStatements ?? 'n/a'} statements`;
}

/** The phase's figures: medians over the rounds, each round's values in `byRound` (report.mjs pairs them). */
function spendFigures(settings, rounds, fixed, checks, profiling) {
  const series = (pick) => rounds.map(pick);
  const byRound = {};
  for (const target of targets) {
    const key = target.startsWith('pgbench') ? `${target}Tps` : `${target}Rps`;
    byRound[key] = series((entry) => entry[target].rps ?? entry[target].tps);
    for (const field of ['serverCpuMs', 'postgresCpuMs', 'p99Ms']) {
      if (rounds[0]?.[target][field] !== undefined) {
        byRound[`perDebit.${target}.${field}`] = series((entry) => entry[target][field]);
      }
    }
  }
  Object.assign(byRound, fixed.byRound);
  const fields = [
    'p50Ms',
    'p99Ms',
    'serverCpuMs',
    'generatorCpuMs',
    'postgresCpuMs',
    'statements',
    'topLevelStatements',
    'postgresExecMs',
    'walBytes',
    'machineBusyCores',
    'otherCores',
  ];
  const perDebitFigures = Object.fromEntries(
    targets.map((target) => [
      target,
      {
        ...Object.fromEntries(
          fields
            .filter((field) => rounds[0]?.[target][field] !== undefined)
            .map((field) => [field, round(median(series((entry) => entry[target][field])), 3)]),
        ),
        // The last round's top statements by execution time (pg_stat_statements).
        topStatements: rounds.at(-1)?.[target].topStatements,
      },
    ]),
  );

  return {
    connections: settings.connections,
    users: settings.users,
    rounds: settings.rounds,
    seconds: settings.seconds,
    fixedSeconds: settings.fixedSeconds,
    ...Object.fromEntries(
      Object.entries(byRound)
        .filter(([key]) => !key.includes('.'))
        .map(([key, list]) => [key, round(median(list))]),
    ),
    perDebit: perDebitFigures,
    fixedRate: fixed.figures,
    profiling,
    checks,
    byRound,
  };
}
