// The spend phase's rows of the report (report.mjs prints them): the rates, the fixed-rate
// latencies, and where a debit's time goes (per debit CPU, statements, round trips, WAL, the top
// statements and the api's CPU profile).
import { round } from '../lib/stats.mjs';

const f = (value, digits = 0) => (Number.isFinite(value) ? String(round(value, digits)) : 'n/a');

const labels = {
  tally: 'Tally api',
  minimal: 'minimal endpoint',
  tallyHot: 'Tally api, one hot wallet',
  minimalHot: 'minimal endpoint, one hot wallet',
  pgbench: "pgbench, the minimal's transaction",
  pgbenchHot: "pgbench, the minimal's transaction, hot wallet",
};

function perDebitNote(run) {
  if (!run) return '';
  const server = run.serverCpuMs === undefined ? '' : `server ${f(run.serverCpuMs, 3)}, `;
  return `CPU ms/debit ${server}Postgres ${f(run.postgresCpuMs, 3)}, generator ${f(run.generatorCpuMs, 3)}; ${f(run.topLevelStatements, 2)} statements (${f(run.statements, 2)} with nested), ${f(run.walBytes)} WAL B; machine ${f(run.machineBusyCores, 2)} cores busy, ${f(run.otherCores, 2)} of them not this run's`;
}

export function spendReportRows(figures) {
  if (!figures) return [];
  const per = figures.perDebit ?? {};
  const rows = [
    [
      `Spend: debits of 1, unique references, ${figures.connections} connections, closed loop; medians of ${figures.rounds} round(s) of ${figures.seconds} s`,
    ],
  ];
  for (const target of ['tally', 'minimal', 'tallyHot', 'minimalHot', 'pgbench', 'pgbenchHot']) {
    const rate = figures[target.startsWith('pgbench') ? `${target}Tps` : `${target}Rps`];
    const run = per[target];
    const latency = run?.p99Ms === undefined ? 'tps' : `debits/s; p50 ${f(run.p50Ms, 1)}, p99 ${f(run.p99Ms, 1)} ms`;
    const label = target.endsWith('Hot') ? labels[target] : `${labels[target]}, ${figures.users} users`;
    rows.push([label, f(rate), `${latency}; ${perDebitNote(run)}`]);
  }
  const fixed = figures.fixedRate ?? {};
  const half = fixed.atTallysHalf ?? {};
  rows.push([`Spend: open loop (latency from the scheduled send), ${figures.fixedSeconds} s runs, medians`]);
  for (const [rate, runs, why] of [
    [fixed.rate, fixed, "half the minimal's max"],
    [half.rate, half, "half Tally's max, report only"],
  ]) {
    for (const target of ['tally', 'minimal']) {
      const run = runs[target] ?? {};
      rows.push([
        `${labels[target]} at ${rate}/s (${why})`,
        `p50 ${f(run.p50Ms, 1)}`,
        `p99 ${f(run.p99Ms, 1)}  p99.9 ${f(run.p999Ms, 1)} ms  (not 201: ${run.notAnswered201}; generator lag up to ${f(run.generatorMaxLagMs, 1)} ms${run.warmupP99Ms == null ? '' : `; the warm-up second's p99 ${f(run.warmupP99Ms, 1)} ms, left out`})`,
      ]);
    }
  }
  rows.push(["Spend: where a debit's time goes (top statements by time, last round; µs per debit)"]);
  for (const target of ['tally', 'minimal']) {
    for (const statement of per[target]?.topStatements?.slice(0, 6) ?? []) {
      rows.push([
        `${labels[target]}${statement.topLevel ? '' : ' (nested)'}`,
        f(statement.execUsPerEvent, 1),
        `µs × ${f(statement.callsPerEvent, 2)}; ${f(statement.walBytesPerEvent)} WAL B: ${statement.query.slice(0, 110)}`,
      ]);
    }
  }
  for (const [target, pass] of Object.entries(figures.profiling ?? {})) {
    rows.push([
      `${labels[target]}, round trips per debit`,
      f(pass.roundTripsPerDebit, 2),
      `profiling pass through a counting proxy at ${f(pass.debitsPerSecond)} debits/s: ${f(pass.roundTripsInTransactionPerDebit, 2)} in a transaction; ${f(pass.topLevelStatementsPerDebit, 2)} statements; ${f(pass.transactionsPerDebit, 2)} transactions, each open ${f(pass.transactionMs, 2)} ms: Postgres ${f(pass.postgresMsInTransaction, 2)}, the client between round trips ${f(pass.clientMsInTransaction, 2)}`,
    ]);
    rows.push([
      `${labels[target]}, its transaction`,
      '',
      `round trip: the client's ms before it / Postgres's ms: ${(pass.timeline ?? [])
        .map(
          (step) =>
            `${step.position}: ${step.position === 0 ? '-' : f(step.clientMsBefore, 2)} / ${f(step.postgresMs, 2)}`,
        )
        .join(
          ', ',
        )}${target.endsWith('Hot') ? `; the row lock (round trip ${pass.lockPosition}) held ${f(pass.lockHeldMs, 2)} ms after it` : ''}`,
    ]);
    const profile = pass.cpuProfile;
    if (!profile) continue;
    rows.push([
      `${labels[target]}, CPU by owner`,
      `${f(profile.busySeconds, 2)} s`,
      profile.byOwner
        .slice(0, 8)
        .map((entry) => `${entry.name} ${entry.sharePct} %`)
        .join(', '),
    ]);
    rows.push([
      `${labels[target]}, CPU by function (self)`,
      '',
      profile.byFunction
        .slice(0, 8)
        .map((entry) => `${entry.name} ${entry.sharePct} %`)
        .join(', '),
    ]);
  }
  const checks = figures.checks ?? {};
  rows.push([
    'every wallet moved by exactly its debits',
    String(checks.tallyWalletsOff === 0 && checks.tallyLotsOff === 0 && checks.minimalWalletsOff === 0),
    `(Tally's lots too); debits written / answered: Tally ${checks.tallyDebitsWritten} / ${checks.tallyDebitsAnswered}, minimal and pgbench ${checks.minimalDebitsWritten} / ${checks.minimalDebitsAnswered}`,
  ]);
  return rows;
}
