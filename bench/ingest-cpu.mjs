// `node bench/ingest-cpu.mjs [checkout B] [rounds]` after a build: ingest's own CPU per accepted
// request, split into user and system time, for this checkout's built ingest (A), optionally a
// second built checkout's or the same with other node flags or settings (B:
// `BENCH_INGEST_B_NODE_FLAGS`, `BENCH_INGEST_B_ENV=K=V,K=V`; an empty checkout argument means
// this one), and the HTTP floor (bench/baselines/bare-endpoint.mjs MODE=floor)
// as the control (BENCH_INGEST_FLOOR_CONSTRUCTORS=1 adds the floor with Tally's server
// constructors, `floorConstructors`, as in the bench's ingest phase, reported beside it), closed loop at BENCH_CONNECTIONS (50) for BENCH_DURATION_SECONDS (8) each,
// rounds (default 5) in rotated order, on a private Postgres cluster when the binaries exist.
// BENCH_INGEST_APPLE=1 configures every Tally ingest for the App Store too (a test CA made as the
// tests make theirs) and adds a contender per ingest, `A-apple` (`B-apple`): distinct signed
// ONE_TIME_CHARGE notifications POSTed to the same process's /webhooks/apple, with the median of
// the rounds' Apple / Stripe CPU ratios. BENCH_INGEST_TARGETS=<comma list of names> runs only
// those contenders (e.g. `B-apple` alone for a profile of Apple's requests).
// Prints every run and the medians: an A/B of ingest builds that does not need the whole bench
// (whose ingest phase also runs the bare endpoints, pgbench and the fixed rates).
import { randomUUID } from 'node:crypto';
import { createBenchContext, parseEnvList, rotated } from './context.mjs';
import { runClosedLoop } from './lib/closed-loop.mjs';
import { median, round } from './lib/stats.mjs';
import { importTestSupport } from './lib/test-support.mjs';
import { pg } from './lib/workspace.mjs';

const [checkoutB, roundsArg = '5'] = process.argv.slice(2);
const ctx = createBenchContext();
const { settings, resources, log } = ctx;
const rounds = Number(roundsArg);
const withApple = process.env.BENCH_INGEST_APPLE === '1';
const only = process.env.BENCH_INGEST_TARGETS?.split(',').filter(Boolean);
let pki;
let pool;
try {
  await ctx.startPostgres();
  await resources.prepareTemplate();
  const databaseUrl = await resources.database('ingest-cpu');
  pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const apple = withApple ? await appleNotifications() : null;
  const endpoints = {
    floor: await ctx.startBareEndpoint('floor', databaseUrl),
    ...(process.env.BENCH_INGEST_FLOOR_CONSTRUCTORS === '1'
      ? {
          floorConstructors: await ctx.startBareEndpoint('floor', databaseUrl, undefined, {
            EXPRESS_CONSTRUCTORS: '1',
          }),
        }
      : {}),
    A: await ctx.startTallyIngest(databaseUrl, resources.prefix('ingest-a'), {
      name: 'tally-ingest-a',
      extraEnv: apple?.env,
    }),
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
      extraEnv: { ...apple?.env, ...envB },
    });
  }
  const stripeItems = (count) => ctx.events(count);
  /** Every contender: the process measured, where its requests go, its requests, the inbox rows it must add. */
  const contenders = {};
  for (const [name, endpoint] of Object.entries(endpoints)) {
    const tally = name === 'A' || name === 'B';
    contenders[name] = { endpoint, url: endpoint.url, items: stripeItems, provider: tally ? 'stripe' : null };
    if (tally && apple) {
      contenders[`${name}-apple`] = { endpoint, url: endpoint.appleUrl, items: apple.items, provider: 'apple' };
    }
  }
  for (const name of only ?? []) if (!contenders[name]) throw new Error(`BENCH_INGEST_TARGETS: no contender ${name}`);
  const names = Object.keys(contenders).filter((name) => !only || only.includes(name));
  // Distinct requests enough for a run: Stripe's as the bench's ingest phase sizes them; an Apple
  // contender's (its signing takes ~0.25 ms a notification) three times what its fastest run so far
  // (the warm-up's, then every measured one's) would send.
  const stripeCount = Math.ceil(4000 * 1.6 * settings.maxSeconds) + settings.connections * 4;
  const appleCount = {};
  const countFor = (name) => (contenders[name].provider === 'apple' ? appleCount[name] : stripeCount);
  const sawRate = (name, rps) => {
    const enough = Math.ceil(rps * 3 * settings.maxSeconds) + settings.connections * 4;
    if (contenders[name].provider === 'apple') appleCount[name] = Math.max(appleCount[name] ?? 4000, enough);
  };
  for (const name of names) {
    const { url, items, provider } = contenders[name];
    const warm = await runClosedLoop({
      url,
      connections: settings.connections,
      durationSeconds: 2,
      items: items(provider === 'apple' ? 4000 : stripeCount),
    });
    sawRate(name, warm.rps);
  }
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  for (let pass = 0; pass < rounds; pass += 1) {
    for (const name of rotated(names, pass)) {
      const { endpoint, url, items: make, provider } = contenders[name];
      // A run whose list wrapped (the contender ran faster than three times its fastest run so
      // far: the machine's load dropped) answered duplicates: run it again with a list sized by it.
      let result;
      let start;
      let end;
      for (let attempt = 1; ; attempt += 1) {
        const items = make(countFor(name));
        const rowsBefore = provider ? await inboxRows(provider) : 0;
        start = endpoint.handle.cpuTimes();
        result = await runClosedLoop({
          url,
          connections: settings.connections,
          durationSeconds: settings.maxSeconds,
          items,
        });
        end = endpoint.handle.cpuTimes();
        sawRate(name, result.rps);
        // Every accepted request a new inbox row, none answered as a duplicate (a run that outlasted its
        // list); the requests still in flight when the run stopped are stored too, unanswered.
        const stored = provider ? (await inboxRows(provider)) - rowsBefore : result.ok;
        if (!result.wrapped && stored >= result.ok) break;
        const problem = `${name}: ${result.ok} accepted, ${stored} stored anew (the list wrapped: ${result.wrapped})`;
        if (!result.wrapped || attempt === 3) throw new Error(problem);
        log(`${problem}: run again`);
      }
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
  const m = (name, key) => median(runs[name].map((run) => run[key]));
  for (const name of names) {
    console.log(
      `${name.padEnd(8)} ${round(m(name, 'rps'))} req/s; CPU µs per accepted request ${m(name, 'cpuUs')} (user ${m(name, 'userUs')}, system ${m(name, 'systemUs')}); peak RSS ${round(contenders[name].endpoint.handle.peakRssMb())} MB`,
    );
  }
  /** The median of the rounds' own ratios of `key` (rounds listed), as the bench's targets take them. */
  const ratio = (a, b, key) => {
    const each = runs[a].map((run, i) => round(run[key] / runs[b][i][key], 2));
    return `${round(median(each), 2)}x (${each.join(', ')})`;
  };
  if (runs.floor) {
    for (const name of names.filter((n) => n !== 'floor')) {
      console.log(
        `${name}: ${round(m(name, 'rps') / m('floor', 'rps'), 2)}x the floor's rate, ${round(m(name, 'cpuUs') / m('floor', 'cpuUs'), 2)}x its CPU per request; per round ${ratio(name, 'floor', 'cpuUs')}`,
      );
    }
  }
  for (const name of ['', '-apple'].filter((kind) => runs[`A${kind}`] && runs[`B${kind}`])) {
    console.log(`A${name} / B${name}, CPU per accepted request: ${ratio(`A${name}`, `B${name}`, 'cpuUs')}`);
  }
  for (const name of ['A', 'B'].filter((n) => runs[n] && runs[`${n}-apple`])) {
    console.log(
      `${name}-apple / ${name} (Stripe), CPU per accepted request: ${ratio(`${name}-apple`, name, 'cpuUs')}; rate ${ratio(`${name}-apple`, name, 'rps')}`,
    );
  }
} finally {
  await pool?.end();
  pki?.dispose();
  await ctx.cleanup();
}

async function inboxRows(provider) {
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM inbox_events WHERE provider = $1', [provider]);
  return rows[0].n;
}

/**
 * The App Store side: a test CA in Apple's shape (test/support/apple-signing.ts, openssl with
 * Apple's marker OIDs), ingest's settings trusting its root, and distinct signed ONE_TIME_CHARGE
 * notifications as the tests build them (test/support/apple-payloads.ts): each its own
 * notificationUUID and transactionId, its signedTransactionInfo nested, the chain in both x5c.
 */
async function appleNotifications() {
  const { ApplePki } = await importTestSupport('apple-signing.ts');
  const { appleAppAppleId, appleBundleId, appleNotificationBody } = await importTestSupport('apple-payloads.ts');
  pki = ApplePki.create({ name: 'Tally Bench' });
  let batch = 0;
  return {
    env: {
      APPLE_ROOT_CERTIFICATES: pki.rootPath,
      APPLE_BUNDLE_ID: appleBundleId,
      APPLE_APP_APPLE_ID: String(appleAppAppleId),
    },
    items(count) {
      batch += 1;
      const started = Date.now();
      const out = new Array(count);
      for (let i = 0; i < count; i += 1) {
        const uuid = randomUUID();
        const body = appleNotificationBody(pki, {
          type: 'ONE_TIME_CHARGE',
          uuid,
          transaction: { transactionId: `${ctx.runId}-${batch}-${i}`, appAccountToken: randomUUID() },
        });
        out[i] = { body };
      }
      log(`signed ${count} App Store notifications in ${Date.now() - started} ms`);
      return out;
    },
  };
}
