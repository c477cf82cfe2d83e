// `node bench/capacity.mjs` (after `tsc -b`): the measurements behind the capacity model of
// docs/scaling.md, on the bench's private cluster (so Postgres CPU per event is exact on a shared
// machine) and private queue prefixes, removed at the end.
//
// CAPACITY_ROUNDS (3) rounds, each running in rotated order: a Stripe pack backlog drained by ONE
// worker, a RevenueCat pack backlog by ONE worker, a Stripe pack backlog by TWO workers
// (drain.mjs's tallyDrain: BENCH_DRAIN_EVENTS, 8000, over BENCH_DRAIN_USERS, 4000, stored
// through Tally's ingest at its maximum first). Each gives, per event: ingest CPU, worker CPU,
// Postgres CPU of the fill and of the drain, Redis CPU, and the server connections they kept busy;
// and for the drain how busy the machine was and how much of that was the run's.
// From the one-worker medians: events/s per ingest core and per worker core, Postgres CPU ms per
// event and flow, what N ingest and M worker replicas need from Postgres; and the check: the rate
// the model predicts for two workers (each as fast as one, until the CPU the machine leaves to the
// run is used up) against the two-worker drains measured in the same rounds.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBenchContext, machine, rotated } from './context.mjs';
import { deploymentNeeds, perCore, predictDrain } from './lib/capacity-model.mjs';
import { median, round } from './lib/stats.mjs';
import { root } from './lib/workspace.mjs';
import { tallyDrain } from './phases/drain.mjs';

// 8000 events over 4000 users per drain unless BENCH_DRAIN_EVENTS / BENCH_DRAIN_USERS say otherwise:
// nine drains then take about 25 minutes on the loaded 2-core development machine.
const ctx = createBenchContext({
  ...process.env,
  BENCH_DRAIN_EVENTS: process.env.BENCH_DRAIN_EVENTS ?? '8000',
  BENCH_DRAIN_USERS: process.env.BENCH_DRAIN_USERS ?? '4000',
});
const { resources, log, settings } = ctx;
const rounds = Number(process.env.CAPACITY_ROUNDS ?? 3);
/** `--from <results.json>`: no measurement, the model again from that file's rounds (rewritten in place). */
const from = process.argv.includes('--from') ? process.argv[process.argv.indexOf('--from') + 1] : null;
const load = () => os.loadavg().map((value) => round(value, 2));
const targets = [
  { name: 'stripe1', flow: 'stripe', workers: 1 },
  { name: 'revenuecat1', flow: 'revenuecat', workers: 1 },
  { name: 'stripe2', flow: 'stripe', workers: 2 },
];
const results = {
  runId: ctx.runId,
  machine: machine(),
  commit: spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim(),
  settings: { rounds, events: settings.drainEvents, users: settings.drainUsers, connections: settings.connections },
  rounds: Object.fromEntries(targets.map(({ name }) => [name, []])),
};

/** The per-event costs of one drain (tallyDrain's figures), in the model's terms. */
function costsOf(entry, cpus = os.cpus().length) {
  return {
    ingestCpuMs: entry.ingestCpuMsPerEvent,
    ingestPostgresMs: entry.ingestPostgresCpuMsPerEvent,
    ingestRedisMs: entry.ingestRedisCpuMsPerEvent,
    ingestConnectionMs: (entry.ingestBusyConnections.mean / entry.ingestRps) * 1000,
    workerCpuMs: entry.workerCpuMsPerEvent,
    drainPostgresMs: entry.postgresCpuMsPerEvent,
    drainRedisMs: entry.redisCpuMsPerEvent,
    drainConnectionMs: (entry.drainBusyConnections.mean / entry.eventsPerSecond) * 1000,
    ingestBusyConnections: entry.ingestBusyConnections.mean,
    workerBusyConnections: entry.drainBusyConnections.mean,
    eventsPerSecond: entry.eventsPerSecond,
    ingestRps: entry.ingestRps,
    // Cores the machine left to the run during the drain: all of them but what other work used
    // (the machine's busy CPU minus the run's workers and cluster; Redis, shared, counts as other).
    availableCores: cpus - (entry.machineBusyCores - entry.runCores),
  };
}

const medianCosts = (list) =>
  Object.fromEntries(Object.keys(list[0]).map((key) => [key, round(median(list.map((entry) => entry[key])), 3)]));

const cleanup = ctx.cleanup;

/** The model's figures from the measured rounds (also for `--from`: a results file's rounds again). */
function deriveModel(results) {
  const costs = Object.fromEntries(
    targets.map(({ name }) => [name, medianCosts(results.rounds[name].map((entry) => entry.costs))]),
  );
  results.costs = costs;
  results.perCore = { stripe: perCore(costs.stripe1), revenuecat: perCore(costs.revenuecat1) };
  results.deployments = Object.fromEntries(
    Object.entries(results.perCore).map(([flow, figures]) => [
      flow,
      [
        [1, 1],
        [2, 4],
        [6, 10],
      ].map(([ingest, workers]) => deploymentNeeds({ ingest, workers, figures })),
    ]),
  );
  // The check: per round, the two-worker rate the model predicts from that round's one-worker
  // drain (its rate and CPU per event) and the CPU left to the two-worker drain, against it.
  results.check = results.rounds.stripe2.map((two, index) => {
    const one = results.rounds.stripe1[index].costs;
    const predicted = predictDrain({
      workers: 2,
      oneWorkerEventsPerSecond: one.eventsPerSecond,
      cpuMsPerEvent: one.workerCpuMs + one.drainPostgresMs,
      availableCores: two.costs.availableCores,
    });
    return {
      round: index + 1,
      oneWorkerEventsPerSecond: round(one.eventsPerSecond),
      availableCoresOneWorker: round(one.availableCores, 2),
      availableCoresTwoWorkers: round(two.costs.availableCores, 2),
      predicted,
      measured: round(two.eventsPerSecond),
      measuredOverPredicted: round(two.eventsPerSecond / predicted.eventsPerSecond, 2),
      cpuMsPerEventOneWorker: round(one.workerCpuMs + one.drainPostgresMs, 3),
      cpuMsPerEventTwoWorkers: round(two.costs.workerCpuMs + two.costs.drainPostgresMs, 3),
      loadAverage: two.loadAverage,
    };
  });
  results.allCredited = Object.values(results.rounds)
    .flat()
    .every((entry) => entry.notProcessed === 0 && entry.ledgerRows === entry.events);
}

function printModel(results) {
  const { costs } = results;
  console.log('\nper event (medians over rounds; ms of CPU, connection ms = time a server connection was busy)');
  for (const [name, value] of Object.entries(costs)) console.log(`  ${name.padEnd(12)} ${JSON.stringify(value)}`);
  console.log('\nper core');
  for (const [flow, value] of Object.entries(results.perCore))
    console.log(`  ${flow.padEnd(12)} ${JSON.stringify(value)}`);
  console.log('\ndeployments (one core per replica, Postgres at 70 %)');
  for (const [flow, list] of Object.entries(results.deployments)) {
    for (const entry of list) console.log(`  ${flow.padEnd(12)} ${JSON.stringify(entry)}`);
  }
  console.log('\ncheck: two workers, predicted against measured');
  for (const entry of results.check) console.log(`  ${JSON.stringify(entry)}`);
  console.log(`  all credited: ${results.allCredited}`);
}

try {
  if (from) {
    // The model again from a results file's measured rounds (e.g. after a change to the model).
    const stored = JSON.parse(readFileSync(from, 'utf8'));
    for (const list of Object.values(stored.rounds))
      for (const entry of list) entry.costs = costsOf(entry, stored.machine.cpus);
    deriveModel(stored);
    printModel(stored);
    writeFileSync(from, `${JSON.stringify(stored, null, 2)}\n`);
    console.log(`\nrewritten: ${from}`);
  } else {
    const postgres = await ctx.startPostgres();
    if (!postgres) throw new Error('capacity needs the private cluster (Postgres binaries: initdb, pg_ctl)');
    log(`private Postgres cluster on port ${postgres.port}; run ${ctx.runId}; commit ${results.commit}`);
    await resources.prepareTemplate();
    for (let pass = 0; pass < rounds; pass += 1) {
      for (const { name, flow, workers } of rotated(targets, pass)) {
        const loadAverage = load();
        const entry = await tallyDrain(ctx, `cap-${name}-${pass}`, workers, flow);
        results.rounds[name].push({ ...entry, loadAverage, costs: costsOf(entry) });
        log(`${name} round ${pass + 1}: load ${loadAverage.join(' ')}; ${JSON.stringify(costsOf(entry))}`);
      }
    }
    deriveModel(results);
    results.machine.loadAverageAtEnd = load();
    printModel(results);
    const complete = settings.profile === 'full';
    const dir = path.join(root, complete ? 'bench/results' : 'test-output/bench');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${new Date().toISOString().replaceAll(':', '-').replace(/\..+/, '')}-capacity.json`);
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nresults: ${path.relative(process.cwd(), file)}`);
  }
} catch (error) {
  process.exitCode = 1;
  log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  await cleanup();
}
