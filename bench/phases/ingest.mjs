// Ingest: Tally's ingest at its maximum (closed loop) against pgbench's one-row insert and the bare
// endpoints, the duplicate path, then fixed rates (open loop) for the latency targets, and the
// peak RSS. Returns its rounds (every run's raw figures) and its figures (medians over rounds).

import { openLoopRequests, rotated } from '../context.mjs';
import { runClosedLoop } from '../lib/closed-loop.mjs';
import { runOpenLoop } from '../lib/open-loop.mjs';
import { insertScript, runPgbench } from '../lib/pgbench.mjs';
import { machineBusyCpuSeconds } from '../lib/processes.mjs';
import { benchPool } from '../lib/resources.mjs';
import { median, round } from '../lib/stats.mjs';
import { redisCpuSeconds } from './drain.mjs';

/**
 * CPU per answered request of every process a closed-loop run keeps busy: the server, the private
 * cluster (every backend; NaN on the shared server), the Redis server, and this process, which
 * runs autocannon (the load generator). `machine` is the whole box's busy CPU per request: what
 * the four leave of it is someone else's (another run sharing the machine).
 */
async function cpuMeter(ctx, server) {
  const read = async () => ({
    server: server.cpuSeconds(),
    postgres: ctx.postgres?.cpuSeconds() ?? Number.NaN,
    redis: await redisCpuSeconds(ctx.redisUrl),
    generator: process.cpuUsage(),
    machine: machineBusyCpuSeconds(),
  });
  const start = await read();
  return async (requests) => {
    const end = await read();
    const us = (seconds) => round((seconds * 1e6) / requests, 0);
    const generator = (end.generator.user + end.generator.system - start.generator.user - start.generator.system) / 1e6;
    return {
      serverUs: us(end.server - start.server),
      postgresUs: us(end.postgres - start.postgres),
      redisUs: us(end.redis - start.redis),
      generatorUs: us(generator),
      machineUs: us(end.machine - start.machine),
    };
  };
}

/** pg_stat_statements (the private cluster only; elsewhere these figures are left out). */
async function resetStatements(pool) {
  await pool.query('SELECT pg_stat_statements_reset()').catch(() => undefined);
}

/**
 * How Tally's batcher batched during the run: its multi-row inserts (the only statements naming
 * provider_subscription_id; the bare endpoints' and pgbench's inserts do not) and their mean rows.
 */
async function tallyBatches(pool) {
  try {
    const { rows } = await pool.query(
      `SELECT coalesce(sum(calls), 0)::int AS inserts, coalesce(sum(rows), 0)::int AS rows FROM pg_stat_statements
        WHERE query LIKE 'INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, user_id, provider_customer_id, provider_subscription_id%'`,
    );
    return { inserts: rows[0].inserts, meanRows: round(rows[0].rows / Math.max(1, rows[0].inserts), 1) };
  } catch {
    return null;
  }
}

/**
 * Each round's figures of the closed-loop runs, in round order (`rounds.ingestMax` of a result):
 * the rate targets take the median of the rounds' own ratios (report.mjs), since the contenders
 * of one round ran minutes apart and the machine drifts between rounds.
 */
export function ingestByRound(max) {
  const rates = (list = []) => list.map((entry) => entry.rps);
  return {
    pgbenchInsertTps: rates(max.pgbenchInsert),
    bareInsertRps: rates(max.bareInsert),
    bareAddRps: rates(max.bareAdd),
    floorRps: rates(max.floor),
    floorConstructorsRps: rates(max.floorConstructors),
    tallyRps: rates(max.tally),
    tallyDuplicateRps: rates(max.tallyDuplicate),
    tallyServerCpuUsPerAccepted: max.tally.map(
      (entry) => (entry.cpuPerRequest.serverUs * (entry.ok + entry.non2xx)) / Math.max(1, entry.ok),
    ),
    floorServerCpuUsPerRequest: max.floor.map((entry) => entry.cpuPerRequest.serverUs),
  };
}

export async function ingestPhase(ctx) {
  const { settings, resources, log, events, checkpoint } = ctx;
  log('ingest: starting Tally ingest and the bare endpoints');
  const databaseUrl = await resources.database('ingest');
  const tally = await ctx.startTallyIngest(databaseUrl, resources.prefix('ingest-tally'));
  const bareInsert = await ctx.startBareEndpoint('insert', databaseUrl);
  const bareAdd = await ctx.startBareEndpoint('insert-add', databaseUrl, resources.prefix('ingest-bare'));
  // The floor of any Express ingest that verifies the signature (no database, no queue).
  const floor = await ctx.startBareEndpoint('floor', databaseUrl);
  // Report only: the same floor with Tally's server constructors (expressMessageConstructors), so
  // Express's per-request prototype swap, which the floor above pays on Node 20, is a no-op.
  const floorConstructors = await ctx.startBareEndpoint('floor', databaseUrl, undefined, { EXPRESS_CONSTRUCTORS: '1' });
  const endpoints = { tally, bareInsert, bareAdd, floor, floorConstructors };
  // Every measured run starts after a CHECKPOINT (see checkpoint()): the runs share one database.
  const control = benchPool(databaseUrl);
  const estimate = { tally: 3000, bareInsert: 3000, bareAdd: 3000, floor: 3000, floorConstructors: 3000 };
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

  const max = {
    pgbenchInsert: [],
    bareInsert: [],
    bareAdd: [],
    floor: [],
    floorConstructors: [],
    tally: [],
    tallyDuplicate: [],
  };
  const insert = insertScript();
  for (let pass = 0; pass < settings.rounds; pass += 1) {
    for (const target of rotated(
      ['pgbenchInsert', 'bareInsert', 'bareAdd', 'floor', 'floorConstructors', 'tally'],
      pass,
    )) {
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
      if (target === 'tally') await resetStatements(control);
      const meter = await cpuMeter(ctx, endpoints[target].handle);
      const result = await runClosedLoop({
        url: endpoints[target].url,
        connections: settings.connections,
        durationSeconds: settings.maxSeconds,
        items,
      });
      result.cpuPerRequest = await meter(result.ok + result.non2xx);
      if (target === 'tally') result.batches = await tallyBatches(control);
      estimate[target] = result.rps;
      max[target].push(result);
      log(
        `ingest round ${pass + 1}: ${target} ${round(result.rps)} req/s (non-2xx ${result.non2xx}, errors ${result.errors}${result.wrapped ? ', WRAPPED' : ''}); CPU µs/request ${JSON.stringify(result.cpuPerRequest)}${result.batches ? `; batch inserts ${result.batches.inserts}, ${result.batches.meanRows} rows each` : ''}`,
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
  const m = (list) => median(list.map((entry) => entry.rps));
  const figures = {
    byRound: ingestByRound(max),
    pgbenchInsertTps: m(max.pgbenchInsert),
    bareInsertRps: m(max.bareInsert),
    bareAddRps: m(max.bareAdd),
    floorRps: m(max.floor),
    floorConstructorsRps: m(max.floorConstructors),
    tallyRps: m(max.tally),
    tallyDuplicateRps: m(max.tallyDuplicate),
    tallyClosedLoopP50Ms: median(max.tally.map((entry) => entry.p50)),
    tallyClosedLoopP99Ms: median(max.tally.map((entry) => entry.p99)),
    tallyDuplicateClosedLoopP50Ms: median(max.tallyDuplicate.map((entry) => entry.p50)),
    tallyDuplicateClosedLoopP99Ms: median(max.tallyDuplicate.map((entry) => entry.p99)),
    tallyMeanBatchRows: median(max.tally.map((entry) => entry.batches?.meanRows ?? Number.NaN)),
    // The ingest process's own CPU per accepted request against the floor server's per answer
    // (a target: on 2 shared cores the server's CPU per request is what sets its rate).
    tallyServerCpuUsPerAccepted: median(
      max.tally.map((entry) => (entry.cpuPerRequest.serverUs * (entry.ok + entry.non2xx)) / Math.max(1, entry.ok)),
    ),
    floorServerCpuUsPerRequest: median(max.floor.map((entry) => entry.cpuPerRequest.serverUs)),
    floorConstructorsServerCpuUsPerRequest: median(max.floorConstructors.map((entry) => entry.cpuPerRequest.serverUs)),
    // Median CPU µs per request of each process, per target (report only: where the time goes).
    cpuPerRequest: Object.fromEntries(
      ['bareInsert', 'bareAdd', 'floor', 'floorConstructors', 'tally'].map((target) => [
        target,
        Object.fromEntries(
          ['serverUs', 'postgresUs', 'redisUs', 'generatorUs', 'machineUs'].map((key) => [
            key,
            median(max[target].map((entry) => entry.cpuPerRequest[key])),
          ]),
        ),
      ]),
    ),
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
  return { rounds: { ingestMax: max, fixedRate: fixed }, figures };
}
