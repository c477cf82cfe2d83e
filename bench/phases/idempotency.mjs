// Idempotency-Key: what a key costs the studio POST. Tally's built api on a private database and
// queue prefix; users prefunded so every request is paid (a full song: request row and debit);
// studio POSTs without a key ("plain") and with a fresh key per request ("keyed"), measured in
// two shapes that both survive a loaded, drifting machine by pairing the contenders closely in
// time:
// - loaded: closed loop over BENCH_IDEM_CONNECTIONS connections, short rounds of plain then keyed
//   (keyed then plain in odd rounds), each after a CHECKPOINT; each round's keyed/plain ratio of
//   mean latency, and their median (the target: at most 1.10). Per request it also reports the
//   api's CPU and, on the private cluster, Postgres's CPU, statements and WAL bytes
//   (pg_stat_statements), which is where a key's extra time shows.
// - serial: one connection, one request at a time, keyed and plain alternating request by request:
//   the latency a single call waits, each keyed request next to a plain one (report only).
// Returns its rounds and figures.

import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { tallyEnvironment } from '../context.mjs';
import { profileEnd, profileStart } from '../lib/pg-profile.mjs';
import { freePort, startNode, waitForHttp } from '../lib/processes.mjs';
import { benchPool } from '../lib/resources.mjs';
import { median, percentile, ratio, round } from '../lib/stats.mjs';
import { root } from '../lib/workspace.mjs';

/** This phase's settings (environment; bench/README.md lists them). */
export function readIdempotencySettings(env, profile) {
  const smoke = profile === 'smoke';
  const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
  return {
    connections: num('BENCH_IDEM_CONNECTIONS', 10),
    seconds: num('BENCH_IDEM_SECONDS', smoke ? 1 : 3),
    rounds: num('BENCH_IDEM_ROUNDS', smoke ? 2 : 10),
    serialSeconds: num('BENCH_IDEM_SERIAL_SECONDS', smoke ? 1 : 4),
    serialRounds: num('BENCH_IDEM_SERIAL_ROUNDS', smoke ? 1 : 5),
    users: num('BENCH_IDEM_USERS', 1000),
    warmupSeconds: smoke ? 0.5 : 2,
  };
}

const body = JSON.stringify({ kind: 'music', durationSeconds: 120, full: true, input: { prompt: 'bench' } });

/** Users with a large balance and the day's free music allowance (2) used up, so every request is paid. */
async function prefundUsers(pool, runId, count) {
  const ids = Array.from({ length: count }, (_, i) => `idem-bench-${runId}-${i}`);
  await pool.query('INSERT INTO users (id) SELECT unnest($1::text[])', [ids]);
  await pool.query('INSERT INTO wallets (user_id) SELECT unnest($1::text[])', [ids]);
  await pool.query(
    `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
     SELECT id, 'bench:grant:' || id, 1000000000, 0, 1000000000, 'bench_grant' FROM unnest($1::text[]) AS id`,
    [ids],
  );
  const day = new Date().toISOString().slice(0, 10);
  await pool.query(
    `INSERT INTO studio_requests (user_id, kind, duration_seconds, input, price_tokens, tokens_charged, free_tier, usage_day, status)
     SELECT id, 'music', 5, '{}', 5, 0, true, $2::date, 'received' FROM unnest($1::text[]) AS id, generate_series(1, 2)`,
    [ids, day],
  );
  return ids;
}

/** Studio POSTs for `seconds` over `connections`, users round robin; `keyTag` set: a fresh key per request. */
async function studioPosts({ apiUrl, appKey, users, connections, seconds, keyTag }) {
  let sent = 0;
  const result = await autocannon({
    url: apiUrl,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${appKey}` },
    requests: [
      {
        setupRequest: (request) => {
          const user = users[sent % users.length];
          sent += 1;
          const headers = keyTag ? { ...request.headers, 'idempotency-key': `${keyTag}-${sent}` } : request.headers;
          return { ...request, path: `/v1/users/${user}/studio/requests`, body, headers };
        },
      },
    ],
  });
  return {
    requests: result['2xx'],
    rps: result['2xx'] / result.duration,
    meanMs: result.latency.mean,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/**
 * One connection, one request at a time for `seconds`, keyed and plain alternating request by
 * request (users round robin, a fresh key per keyed request): the latencies of each.
 */
async function serialPosts({ apiUrl, appKey, users, seconds, keyTag }) {
  const target = new URL(apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = { plain: [], keyed: [] };
  let failed = 0;
  const deadline = performance.now() + seconds * 1000;
  try {
    for (let sent = 0; performance.now() < deadline; sent += 1) {
      const contender = sent % 2 === 0 ? 'plain' : 'keyed';
      const headers = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        authorization: `Bearer ${appKey}`,
        ...(contender === 'keyed' ? { 'idempotency-key': `${keyTag}-${sent}` } : {}),
      };
      const startedAt = performance.now();
      const status = await new Promise((resolve) => {
        const request = http.request(
          {
            agent,
            host: target.hostname,
            port: target.port,
            path: `/v1/users/${users[sent % users.length]}/studio/requests`,
            method: 'POST',
            headers,
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
          },
        );
        request.on('error', () => resolve(null));
        request.end(body);
      });
      if (status !== 202) failed += 1;
      latencies[contender].push(performance.now() - startedAt);
    }
  } finally {
    agent.destroy();
  }
  const figuresOf = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return {
      requests: values.length,
      meanMs: values.reduce((sum, value) => sum + value, 0) / values.length,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
    };
  };
  return { failed, plain: figuresOf(latencies.plain), keyed: figuresOf(latencies.keyed) };
}

const contenders = ['plain', 'keyed'];

export async function idempotencyPhase(ctx) {
  const { resources, log, checkpoint, runId } = ctx;
  const settings = readIdempotencySettings(process.env, ctx.settings.profile);
  const appKey = `app_bench_${runId}`;
  const databaseUrl = await resources.database('idem');
  const pool = benchPool(databaseUrl);
  const users = await prefundUsers(pool, runId, settings.users);
  const port = await freePort();
  // Experiments only (not for figures): another build of the api, e.g. the claim-first design to compare.
  const apiMain = process.env.BENCH_IDEM_API_MAIN ?? path.join(root, 'apps/api/dist/main.js');
  const api = startNode('tally-api', apiMain, {
    ...tallyEnvironment,
    DATABASE_URL: databaseUrl,
    REDIS_URL: ctx.redisUrl,
    QUEUE_PREFIX: resources.prefix('idem'),
    API_PORT: String(port),
    APP_API_KEYS: appKey,
    ADMIN_API_KEYS: `admin_bench_${runId}`,
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  const rounds = { loaded: [], serial: [] };
  try {
    await waitForHttp(api, `${apiUrl}/healthz`);
    log(
      `idempotency: studio POSTs, plain and keyed: ${settings.rounds} alternating round(s) of ${settings.seconds} s each over ${settings.connections} connections, then ${settings.serialRounds} round(s) of ${settings.serialSeconds} s on one connection`,
    );
    for (const contender of contenders) {
      await studioPosts({
        apiUrl,
        appKey,
        users,
        connections: settings.connections,
        seconds: settings.warmupSeconds,
        keyTag: contender === 'keyed' && `bench-${runId}-warm`,
      });
    }
    for (let pass = 0; pass < settings.rounds; pass += 1) {
      const pair = {};
      // Alternating order: plain first in even rounds, keyed first in odd ones.
      for (const contender of pass % 2 === 0 ? contenders : [...contenders].reverse()) {
        await checkpoint(pool);
        const profile = await profileStart(ctx.postgres, pool);
        const apiCpuAtStart = api.cpuSeconds();
        const run = await studioPosts({
          apiUrl,
          appKey,
          users,
          connections: settings.connections,
          seconds: settings.seconds,
          keyTag: contender === 'keyed' && `bench-${runId}-${pass}`,
        });
        if (run.non2xx > 0 || run.errors > 0) {
          throw new Error(`idempotency ${contender}: ${run.non2xx} non-2xx answers, ${run.errors} errors`);
        }
        run.apiCpuMsPerRequest = round(((api.cpuSeconds() - apiCpuAtStart) * 1000) / run.requests, 3);
        // The api keeps its connections open: read the live cluster's figures without waiting for them to leave.
        const figures = await profileEnd(profile, pool, run.requests, 'idempotency_keys', { awaitDisconnect: false });
        run.postgresCpuMsPerRequest = figures.clusterCpuMsPerEvent;
        run.statementsPerRequest = figures.statementsPerEvent;
        run.walBytesPerRequest = figures.walBytesPerEvent;
        run.statements = figures.statements;
        pair[contender] = run;
      }
      pair.keyedOverPlainMeanMs = ratio(pair.keyed.meanMs, pair.plain.meanMs);
      rounds.loaded.push(pair);
      log(
        `idempotency round ${pass + 1}, ${settings.connections} connections: ${contenders
          .map(
            (contender) =>
              `${contender} mean ${pair[contender].meanMs.toFixed(1)} ms (${Math.round(pair[contender].rps)} req/s; CPU ms/request api ${pair[contender].apiCpuMsPerRequest}, Postgres ${pair[contender].postgresCpuMsPerRequest ?? 'n/a'}; ${pair[contender].statementsPerRequest ?? 'n/a'} statements)`,
          )
          .join(', ')}; keyed/plain ${pair.keyedOverPlainMeanMs.toFixed(3)}`,
      );
    }
    for (let pass = 0; pass < settings.serialRounds; pass += 1) {
      const run = await serialPosts({
        apiUrl,
        appKey,
        users,
        seconds: settings.serialSeconds,
        keyTag: `bench-${runId}-serial-${pass}`,
      });
      if (run.failed > 0) throw new Error(`idempotency serial: ${run.failed} requests not answered 202`);
      run.keyedOverPlainMeanMs = ratio(run.keyed.meanMs, run.plain.meanMs);
      run.keyedOverPlainP50Ms = ratio(run.keyed.p50Ms, run.plain.p50Ms);
      rounds.serial.push(run);
      log(
        `idempotency serial round ${pass + 1}: plain mean ${run.plain.meanMs.toFixed(2)} ms (p50 ${run.plain.p50Ms.toFixed(2)}), keyed mean ${run.keyed.meanMs.toFixed(2)} ms (p50 ${run.keyed.p50Ms.toFixed(2)}), ${run.plain.requests + run.keyed.requests} requests; keyed/plain ${run.keyedOverPlainMeanMs.toFixed(3)}`,
      );
    }
    const keys = (await pool.query('SELECT count(*)::int AS count FROM idempotency_keys')).rows[0].count;
    log(`idempotency: ${keys} keys stored`);
  } finally {
    await api.stop();
    await pool.end();
  }
  const fields = [
    'meanMs',
    'p50Ms',
    'p99Ms',
    'rps',
    'apiCpuMsPerRequest',
    'postgresCpuMsPerRequest',
    'statementsPerRequest',
    'walBytesPerRequest',
  ];
  const medianOf = (runs, pick) => median(runs.map(pick));
  const figures = {
    connections: settings.connections,
    rounds: settings.rounds,
    seconds: settings.seconds,
    serialRounds: settings.serialRounds,
    loaded: {
      keyedOverPlainMeanMs: round(
        medianOf(rounds.loaded, (run) => run.keyedOverPlainMeanMs),
        3,
      ),
    },
    serial: {
      keyedOverPlainMeanMs: round(
        medianOf(rounds.serial, (run) => run.keyedOverPlainMeanMs),
        3,
      ),
      keyedOverPlainP50Ms: round(
        medianOf(rounds.serial, (run) => run.keyedOverPlainP50Ms),
        3,
      ),
    },
  };
  for (const contender of contenders) {
    figures.loaded[contender] = Object.fromEntries(
      fields.map((field) => [field, medianOf(rounds.loaded, (run) => run[contender][field])]),
    );
    figures.serial[contender] = Object.fromEntries(
      ['meanMs', 'p50Ms', 'p99Ms'].map((field) => [field, medianOf(rounds.serial, (run) => run[contender][field])]),
    );
  }
  return { rounds: { idempotency: rounds }, figures };
}

/** The report's rows for this phase (report.mjs prints them). */
export function idempotencyReportRows(figures) {
  if (!figures) return [];
  const f = (value, digits = 0) => (Number.isFinite(value) ? String(round(value, digits)) : 'n/a');
  const rows = [
    [
      `Idempotency-Key: studio POST (paid full song), plain vs keyed, medians of ${figures.rounds} paired round(s) of ${figures.seconds} s`,
    ],
  ];
  for (const contender of contenders) {
    const run = figures.loaded[contender];
    rows.push([
      `${contender}, ${figures.connections} connections`,
      `mean ${f(run.meanMs, 2)}`,
      `ms; p50 ${f(run.p50Ms, 1)}, p99 ${f(run.p99Ms, 1)} ms; ${f(run.rps)} req/s; CPU ms/request api ${f(run.apiCpuMsPerRequest, 3)}, Postgres ${f(run.postgresCpuMsPerRequest, 3)}; ${f(run.statementsPerRequest, 2)} statements, ${f(run.walBytesPerRequest)} WAL B`,
    ]);
  }
  rows.push([
    "keyed / plain, mean latency, median of the rounds' ratios",
    f(figures.loaded.keyedOverPlainMeanMs, 3),
    '',
  ]);
  for (const contender of contenders) {
    const run = figures.serial[contender];
    rows.push([
      `${contender}, 1 connection, alternating requests`,
      `mean ${f(run.meanMs, 2)}`,
      `ms; p50 ${f(run.p50Ms, 2)}, p99 ${f(run.p99Ms, 1)} ms (medians of ${figures.serialRounds} round(s))`,
    ]);
  }
  rows.push([
    "keyed / plain, 1 connection, median of the rounds' ratios",
    f(figures.serial.keyedOverPlainMeanMs, 3),
    `mean; p50 ${f(figures.serial.keyedOverPlainP50Ms, 3)}`,
  ]);
  return rows;
}
