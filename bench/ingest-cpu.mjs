// `node bench/ingest-cpu.mjs [checkout B] [rounds]` after a build: ingest's own CPU per accepted
// request, split into user and system time, for this checkout's built ingest (A), optionally a
// second built checkout's or the same with other node flags or settings (B:
// `BENCH_INGEST_B_NODE_FLAGS`, `BENCH_INGEST_B_ENV=K=V,K=V`; an empty checkout argument means
// this one), and the HTTP floor (bench/baselines/bare-endpoint.mjs MODE=floor)
// as the control (BENCH_INGEST_FLOOR_CONSTRUCTORS=1 adds the floor with Tally's server
// constructors, `floorConstructors`, as in the bench's ingest phase, reported beside it), closed loop at BENCH_CONNECTIONS (50) for BENCH_DURATION_SECONDS (8) each,
// rounds (default 5) in rotated order, on a private Postgres cluster when the binaries exist.
// Prints every run and the medians: an A/B of ingest builds that does not need the whole bench
// (whose ingest phase also runs the bare endpoints, pgbench and the fixed rates).
import { createBenchContext, parseEnvList, rotated } from './context.mjs';
import { runClosedLoop } from './lib/closed-loop.mjs';
import { median, round } from './lib/stats.mjs';

const [checkoutB, roundsArg = '5'] = process.argv.slice(2);
const ctx = createBenchContext();
const { settings, resources, log } = ctx;
const rounds = Number(roundsArg);
try {
  await ctx.startPostgres();
  await resources.prepareTemplate();
  const databaseUrl = await resources.database('ingest-cpu');
  const endpoints = {
    floor: await ctx.startBareEndpoint('floor', databaseUrl),
    ...(process.env.BENCH_INGEST_FLOOR_CONSTRUCTORS === '1'
      ? {
          floorConstructors: await ctx.startBareEndpoint('floor', databaseUrl, undefined, {
            EXPRESS_CONSTRUCTORS: '1',
          }),
        }
      : {}),
    A: await ctx.startTallyIngest(databaseUrl, resources.prefix('ingest-a'), { name: 'tally-ingest-a' }),
  };
  const flagsB = process.env.BENCH_INGEST_B_NODE_FLAGS?.split(' ').filter(Boolean);
  const envB = process.env.BENCH_INGEST_B_ENV
    ? parseEnvList('BENCH_INGEST_B_ENV', process.env.BENCH_INGEST_B_ENV)
    : undefined;
  if (checkoutB || flagsB || envB) {
    endpoints.B = await ctx.startTallyIngest(databaseUrl, resources.prefix('ingest-b'), {
      checkout: checkoutB || undefined,
      name: 'tally-ingest-b',
      nodeFlags: flagsB,
      extraEnv: envB,
    });
  }
  const names = Object.keys(endpoints);
  const count = Math.ceil(4000 * 1.6 * settings.maxSeconds) + settings.connections * 4;
  for (const name of names) {
    await runClosedLoop({
      url: endpoints[name].url,
      connections: settings.connections,
      durationSeconds: 2,
      items: ctx.events(count),
    });
  }
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  for (let pass = 0; pass < rounds; pass += 1) {
    for (const name of rotated(names, pass)) {
      const items = ctx.events(count);
      const start = endpoints[name].handle.cpuTimes();
      const result = await runClosedLoop({
        url: endpoints[name].url,
        connections: settings.connections,
        durationSeconds: settings.maxSeconds,
        items,
      });
      const end = endpoints[name].handle.cpuTimes();
      const per = (seconds) => round((seconds * 1e6) / Math.max(1, result.ok), 0);
      const run = {
        rps: round(result.rps),
        userUs: per(end.user - start.user),
        systemUs: per(end.system - start.system),
        non2xx: result.non2xx,
      };
      run.cpuUs = run.userUs + run.systemUs;
      runs[name].push(run);
      log(`round ${pass + 1} ${name}: ${JSON.stringify(run)}`);
    }
  }
  for (const name of names) {
    const m = (key) => median(runs[name].map((run) => run[key]));
    console.log(
      `${name.padEnd(6)} ${round(m('rps'))} req/s; CPU µs per accepted request ${m('cpuUs')} (user ${m('userUs')}, system ${m('systemUs')}); peak RSS ${round(endpoints[name].handle.peakRssMb())} MB`,
    );
  }
  const floorCpu = median(runs.floor.map((run) => run.cpuUs));
  const floorRps = median(runs.floor.map((run) => run.rps));
  for (const name of names.filter((n) => n !== 'floor')) {
    console.log(
      `${name}: ${round(median(runs[name].map((run) => run.rps)) / floorRps, 2)}x the floor's rate, ${round(median(runs[name].map((run) => run.cpuUs)) / floorCpu, 2)}x its CPU per request`,
    );
  }
} finally {
  await ctx.cleanup();
}
