// The run-wide context every phase uses: the settings read from the environment, the run's id and
// secrets, its private resources, the starters of Tally's processes and of the baselines, and the
// helpers every measured run shares (signed events, rotated round order, a CHECKPOINT first).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeFlags } from '../scripts/node-flags.mjs';
import { PrivatePostgres, postgresBinDir } from './lib/private-postgres.mjs';
import { freePort, startNode, stopAll, waitForHttp } from './lib/processes.mjs';
import { BenchResources } from './lib/resources.mjs';
import { round } from './lib/stats.mjs';
import { signedEvents } from './lib/stripe-events.mjs';
import { root } from './lib/workspace.mjs';

/** The bench's settings (environment; bench/README.md lists them). */
export function readSettings(env = process.env) {
  const smoke = env.BENCH_PROFILE === 'smoke';
  const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
  return {
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
    // Experiments: only these drain targets (comma list of drain.mjs's names), e.g. tally1,minimalStripe.
    drainTargets: env.BENCH_DRAIN_TARGETS ? env.BENCH_DRAIN_TARGETS.split(',') : null,
    // The baselines' concurrency (bare and minimal workers, pgbench clients). Tally's worker runs
    // with its own defaults (WORKER_CONCURRENCY 128, first runs coalesced into 4 transactions of up to 32)
    // unless BENCH_TALLY_CONCURRENCY sets its concurrency.
    workerConcurrency: num('BENCH_BASELINE_CONCURRENCY', 8),
    // The minimal worker also runs at this concurrency (the issue's 32; at 64, Tally's default, it
    // drained as fast, within its rounds: bench/README.md): its figure is the better of the two
    // (a target's baseline at its best, not at a setting that suits Tally).
    minimalHighConcurrency: num('BENCH_MINIMAL_HIGH_CONCURRENCY', 32),
    tallyWorkerConcurrency: env.BENCH_TALLY_CONCURRENCY ? Number(env.BENCH_TALLY_CONCURRENCY) : 'default',
    creditPgbenchSeconds: num('BENCH_CREDIT_PGBENCH_SECONDS', smoke ? 2 : 8),
    e2eSeconds: num('BENCH_E2E_SECONDS', smoke ? 1 : 8),
    e2eRounds: num('BENCH_E2E_ROUNDS', smoke ? 1 : 3),
    e2eWarmupSeconds: smoke ? 0.5 : 3,
    e2eRate: num('BENCH_E2E_RATE', 0),
    // App webhooks (phases/app-webhooks.mjs): drains with and without APP_WEBHOOK_URL and the bare
    // worker, in rotated rounds, on a smaller backlog than the drain's (nine drains per run).
    appWebhookEvents: num('BENCH_APP_WEBHOOK_EVENTS', smoke ? 100 : 4_000),
    appWebhookUsers: num('BENCH_APP_WEBHOOK_USERS', smoke ? 50 : 2_000),
    appWebhookRounds: num('BENCH_APP_WEBHOOK_ROUNDS', smoke ? 1 : 3),
    // private: a cluster of the bench's own with pg_stat_statements (the CPU and WAL per event
    // are then the run's alone); server: the database server of BENCH_DATABASE_URL/DATABASE_URL.
    postgres: env.BENCH_POSTGRES ?? (postgresBinDir() ? 'private' : 'server'),
  };
}

/** Tally's processes run with exactly this configuration (printed with the results). */
export const tallyEnvironment = {
  // A staging deployment: the bench's Stripe events are test-mode and its RevenueCat packs are
  // unverified, both of which NODE_ENV=production refuses at start (docs/configuration.md).
  NODE_ENV: 'staging',
  PAYMENT_ENVIRONMENTS: 'production,sandbox',
  LOG_LEVEL: 'warn',
};

export function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGb: round(os.totalmem() / 2 ** 30, 1),
    loadAverageAtStart: os.loadavg().map((value) => round(value, 2)),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

/**
 * An experiment's settings list, `K=V,K=V` (a value may contain '=', not ','), as an object; a
 * pair without '=' is refused rather than read as a misspelt name.
 */
export function parseEnvList(name, text = '') {
  return Object.fromEntries(
    text
      .split(',')
      .filter(Boolean)
      .map((pair) => {
        const at = pair.indexOf('=');
        if (at <= 0) throw new Error(`${name}: expected K=V,K=V, got "${pair}"`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
  );
}

/** Each round runs the targets in a different (rotated) order, so drift hits them alike. */
export function rotated(list, pass) {
  const shift = pass % list.length;
  return [...list.slice(shift), ...list.slice(0, shift)];
}

/**
 * The drain's round order: the list as given in even rounds, reversed in odd ones (A B … B A), so a
 * steady drift hits every target alike over two rounds while targets that sit next to each other
 * in the list (a contender and its baselines) stay next to each other in every round. A rotation
 * splits the pair at its wrap: in one run the Stripe pair of a round ran five minutes apart, across
 * a slowdown of the machine, and that round's ratio (1.04) was the odd one out of 1.47 and 1.61.
 */
export function alternated(list, pass) {
  return pass % 2 === 0 ? [...list] : [...list].reverse();
}

export function openLoopRequests(items) {
  return (index) => {
    const item = items[index % items.length];
    return { body: item.body, headers: { 'content-type': 'application/json', 'stripe-signature': item.signature } };
  };
}

export function createBenchContext(env = process.env) {
  const settings = readSettings(env);
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const secret = `whsec_bench_${runId}`;
  const revenueCatAuthorization = `Bearer rc_bench_${runId}`;
  const serverUrl = env.BENCH_DATABASE_URL ?? env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = env.BENCH_REDIS_URL ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const resources = new BenchResources({ serverUrl, redisUrl, runId });
  /** The private cluster (settings.postgres === 'private'), started by startPostgres(). */
  let postgres = null;
  async function startPostgres() {
    if (settings.postgres !== 'private') return null;
    postgres = await PrivatePostgres.start(await freePort());
    resources.serverUrl = postgres.serverUrl;
    resources.extensions = ['pg_stat_statements'];
    // Experiments only (not for figures): SQL run in the template after the migrations, e.g. an index change to compare.
    if (env.BENCH_TEMPLATE_SQL) resources.templateSql = readFileSync(env.BENCH_TEMPLATE_SQL, 'utf8');
    return postgres;
  }
  async function stopPostgres() {
    await postgres?.destroy();
  }
  /** Stops every child process and removes every resource of the run, once (also on SIGINT / SIGTERM). */
  let cleaning;
  function cleanup() {
    cleaning ??= (async () => {
      await stopAll();
      await resources.cleanup();
      await stopPostgres();
    })();
    return cleaning;
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      log(`${signal}: stopping children and removing bench resources`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  const ingestMain = path.join(root, 'apps/ingest/dist/main.js');
  const workerMain = path.join(root, 'apps/worker/dist/main.js');
  const bareEndpoint = path.join(root, 'bench/baselines/bare-endpoint.mjs');
  const bareWorker = path.join(root, 'bench/baselines/bare-worker.mjs');
  /** Experiments only (not for figures): extra environment for Tally's ingest, e.g. "INGEST_BATCH_CONCURRENCY=2". */
  const tallyIngestExtraEnv = parseEnvList('BENCH_INGEST_ENV', env.BENCH_INGEST_ENV);
  /**
   * Tally's ingest runs with the node flags every launcher gives it (scripts/node-flags.mjs);
   * BENCH_INGEST_NODE_FLAGS replaces them for experiments (not for figures).
   */
  const tallyIngestNodeFlags =
    env.BENCH_INGEST_NODE_FLAGS === undefined
      ? nodeFlags.ingest
      : env.BENCH_INGEST_NODE_FLAGS.split(' ').filter(Boolean);
  /** Profiling only (not for figures): node flags for Tally's worker and the bare worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof". */
  const tallyWorkerNodeFlags = (env.BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const startedAt = Date.now();

  function log(message) {
    process.stderr.write(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)}s] ${message}\n`);
  }

  /**
   * Experiments only (bench/ingest-cpu.mjs): `checkout`, the built ingest of another checkout;
   * `nodeFlags`, other node flags than the launchers'; `extraEnv`, more settings.
   */
  async function startTallyIngest(databaseUrl, prefix, { checkout, name = 'tally-ingest', nodeFlags, extraEnv } = {}) {
    const port = await freePort();
    const handle = startNode(
      name,
      checkout ? path.join(checkout, 'apps/ingest/dist/main.js') : ingestMain,
      {
        ...tallyEnvironment,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix,
        INGEST_PORT: String(port),
        STRIPE_WEBHOOK_SECRETS: secret,
        REVENUECAT_WEBHOOK_AUTH: revenueCatAuthorization,
        ...tallyIngestExtraEnv,
        ...extraEnv,
      },
      [],
      nodeFlags ?? tallyIngestNodeFlags,
    );
    await waitForHttp(handle, `http://127.0.0.1:${port}/healthz`);
    return {
      handle,
      url: `http://127.0.0.1:${port}/webhooks/stripe`,
      revenueCatUrl: `http://127.0.0.1:${port}/webhooks/revenuecat`,
      revenueCatAuthorization,
      /** App Store notifications: answered 503 unless `extraEnv` sets the APPLE_* settings (bench/ingest-cpu.mjs). */
      appleUrl: `http://127.0.0.1:${port}/webhooks/apple`,
    };
  }

  /** `checkout`: experiments only (a drain variant's ROOT): the built worker of another checkout. */
  function startTallyWorker(databaseUrl, prefix, name = 'tally-worker', extraEnv = {}, checkout = undefined) {
    return startNode(
      name,
      checkout ? path.join(checkout, 'apps/worker/dist/main.js') : workerMain,
      {
        ...tallyEnvironment,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix,
        WORKER_METRICS_PORT: '0',
        ...(env.BENCH_TALLY_CONCURRENCY ? { WORKER_CONCURRENCY: env.BENCH_TALLY_CONCURRENCY } : {}),
        // As the production inbox deployment runs it (infra/k8s/worker-inbox.yaml): the consumer
        // alone; the relay, email and other loops run in the scheduler deployment.
        WORKER_ROLES: 'inbox',
        // Experiments only (not for figures): `BENCH_TALLY_WORKER_ENV=K=V,K=V` adds worker settings.
        ...parseEnvList('BENCH_TALLY_WORKER_ENV', env.BENCH_TALLY_WORKER_ENV),
        ...extraEnv,
      },
      [],
      tallyWorkerNodeFlags,
    );
  }

  /** `extraEnv`: experiments only, e.g. EXPRESS_CONSTRUCTORS=1 (bare-endpoint.mjs). */
  async function startBareEndpoint(mode, databaseUrl, prefix, extraEnv = {}) {
    const port = await freePort();
    const handle = startNode(
      `bare-${mode}`,
      bareEndpoint,
      {
        MODE: mode,
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix ?? '',
        STRIPE_SECRET: secret,
        ...extraEnv,
      },
      [],
      // Profiling only (not for figures): node flags for the bare endpoints, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
      (env.BENCH_BASELINE_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    );
    await waitForHttp(handle, `http://127.0.0.1:${port}/healthz`);
    return { handle, url: `http://127.0.0.1:${port}/webhooks/stripe` };
  }

  function startMinimalWorker(databaseUrl, prefix, flow, concurrency = settings.workerConcurrency) {
    return startNode(
      `minimal-worker-${flow}-${concurrency}`,
      path.join(root, 'bench/baselines/minimal-worker.mjs'),
      {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: prefix,
        CONCURRENCY: String(concurrency),
        FLOW: flow,
      },
      [],
      tallyWorkerNodeFlags,
    );
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

  let eventBatch = 0;
  /** Distinct signed Stripe events of this run (every batch its own tag, so ids never repeat). */
  function events(count, users = 10_000, tag = undefined) {
    eventBatch += 1;
    return signedEvents({ tag: `${runId}${tag ?? `b${eventBatch}`}`, count, users, secret });
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

  return {
    settings,
    runId,
    redisUrl,
    resources,
    startedAt,
    log,
    events,
    checkpoint,
    startTallyIngest,
    startTallyWorker,
    startBareEndpoint,
    startBareWorker,
    startMinimalWorker,
    startPostgres,
    stopPostgres,
    cleanup,
    get postgres() {
      return postgres;
    },
    secret,
  };
}
