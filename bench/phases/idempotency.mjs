// Idempotency-Key: what a key costs the studio POST. Tally's built api on a private database and
// queue prefix; users prefunded so every request is paid (a full song: request row and debit);
// studio POSTs without a key ("plain") and with a fresh key per request ("keyed"), in
// alternating rounds of the same run, each after a CHECKPOINT, in two shapes: closed loop with
// BENCH_IDEM_CONNECTIONS connections (the target: keyed mean latency at most 1.10x plain) and one
// connection (one request at a time: the latency a single call waits, report only). Per request
// it also reports the api's CPU and, on the private cluster, Postgres's CPU, statements and WAL
// bytes (pg_stat_statements), which is where the key's extra time shows. Returns its rounds and
// figures.

import path from 'node:path';
import autocannon from 'autocannon';
import { tallyEnvironment } from '../context.mjs';
import { profileEnd, profileStart } from '../lib/pg-profile.mjs';
import { freePort, startNode, waitForHttp } from '../lib/processes.mjs';
import { benchPool } from '../lib/resources.mjs';
import { median, ratio, round } from '../lib/stats.mjs';
import { root } from '../lib/workspace.mjs';

/** This phase's settings (environment; bench/README.md lists them). */
export function readIdempotencySettings(env, profile) {
  const smoke = profile === 'smoke';
  const num = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
  return {
    connections: num('BENCH_IDEM_CONNECTIONS', 10),
    seconds: num('BENCH_IDEM_SECONDS', smoke ? 1 : 8),
    rounds: num('BENCH_IDEM_ROUNDS', smoke ? 1 : 3),
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

const contenders = ['plain', 'keyed'];
const shapes = ['loaded', 'serial'];

export async function idempotencyPhase(ctx) {
  const { resources, log, checkpoint, runId } = ctx;
  const settings = readIdempotencySettings(process.env, ctx.settings.profile);
  const appKey = `app_bench_${runId}`;
  const databaseUrl = await resources.database('idem');
  const pool = benchPool(databaseUrl);
  const users = await prefundUsers(pool, runId, settings.users);
  const port = await freePort();
  const api = startNode('tally-api', path.join(root, 'apps/api/dist/main.js'), {
    ...tallyEnvironment,
    DATABASE_URL: databaseUrl,
    REDIS_URL: ctx.redisUrl,
    QUEUE_PREFIX: resources.prefix('idem'),
    API_PORT: String(port),
    APP_API_KEYS: appKey,
    ADMIN_API_KEYS: `admin_bench_${runId}`,
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  const connectionsOf = (shape) => (shape === 'loaded' ? settings.connections : 1);
  const rounds = Object.fromEntries(shapes.map((shape) => [shape, { plain: [], keyed: [] }]));
  try {
    await waitForHttp(api, `${apiUrl}/healthz`);
    log(`idempotency: studio POSTs, plain and keyed, ${settings.rounds} alternating round(s) of ${settings.seconds} s`);
    for (const shape of shapes) {
      for (const contender of contenders) {
        await studioPosts({
          apiUrl,
          appKey,
          users,
          connections: connectionsOf(shape),
          seconds: settings.warmupSeconds,
          keyTag: contender === 'keyed' && `bench-${runId}-warm-${shape}`,
        });
      }
    }
    for (let pass = 0; pass < settings.rounds; pass += 1) {
      for (const shape of shapes) {
        // Alternating order: plain first in even rounds, keyed first in odd ones.
        for (const contender of pass % 2 === 0 ? contenders : [...contenders].reverse()) {
          await checkpoint(pool);
          const profile = await profileStart(ctx.postgres, pool);
          const apiCpuAtStart = api.cpuSeconds();
          const run = await studioPosts({
            apiUrl,
            appKey,
            users,
            connections: connectionsOf(shape),
            seconds: settings.seconds,
            keyTag: contender === 'keyed' && `bench-${runId}-${shape}-${pass}`,
          });
          if (run.non2xx > 0 || run.errors > 0) {
            throw new Error(`idempotency ${shape} ${contender}: ${run.non2xx} non-2xx answers, ${run.errors} errors`);
          }
          run.apiCpuMsPerRequest = round(((api.cpuSeconds() - apiCpuAtStart) * 1000) / run.requests, 3);
          // The api keeps its connections open: read the live cluster's figures without waiting for them to leave.
          const figures = await profileEnd(profile, pool, run.requests, 'idempotency_keys', { awaitDisconnect: false });
          run.postgresCpuMsPerRequest = figures.clusterCpuMsPerEvent;
          run.statementsPerRequest = figures.statementsPerEvent;
          run.walBytesPerRequest = figures.walBytesPerEvent;
          run.statements = figures.statements;
          rounds[shape][contender].push(run);
          log(
            `idempotency round ${pass + 1}, ${shape} (${connectionsOf(shape)} connection(s)): ${contender} mean ${round(run.meanMs, 2)} ms, p99 ${round(run.p99Ms, 2)} ms, ${round(run.rps)} req/s; CPU ms/request api ${run.apiCpuMsPerRequest}, Postgres ${run.postgresCpuMsPerRequest ?? 'n/a'}; ${run.statementsPerRequest ?? 'n/a'} statements, ${run.walBytesPerRequest ?? 'n/a'} WAL B/request`,
          );
        }
      }
    }
    const keys = (await pool.query('SELECT count(*)::int AS count FROM idempotency_keys')).rows[0].count;
    log(`idempotency: ${keys} keys stored`);
  } finally {
    await api.stop();
    await pool.end();
  }
  const at = (shape, contender, field) => median(rounds[shape][contender].map((run) => run[field]));
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
  const figures = { connections: settings.connections, seconds: settings.seconds, rounds: settings.rounds };
  for (const shape of shapes) {
    figures[shape] = {};
    for (const contender of contenders) {
      figures[shape][contender] = Object.fromEntries(fields.map((field) => [field, at(shape, contender, field)]));
    }
    figures[shape].keyedOverPlainMeanMs = round(ratio(figures[shape].keyed.meanMs, figures[shape].plain.meanMs), 3);
  }
  return { rounds: { idempotency: rounds }, figures };
}

/** The report's rows for this phase (report.mjs prints them). */
export function idempotencyReportRows(figures) {
  if (!figures) return [];
  const f = (value, digits = 0) => (Number.isFinite(value) ? String(round(value, digits)) : 'n/a');
  const rows = [
    [`Idempotency-Key: studio POST (paid full song), plain vs keyed, medians of ${figures.rounds} round(s)`],
  ];
  for (const shape of shapes) {
    const connections = shape === 'loaded' ? figures.connections : 1;
    for (const contender of contenders) {
      const run = figures[shape][contender];
      rows.push([
        `${contender}, ${connections} connection(s)`,
        `mean ${f(run.meanMs, 2)}`,
        `ms; p50 ${f(run.p50Ms, 1)}, p99 ${f(run.p99Ms, 1)} ms; ${f(run.rps)} req/s; CPU ms/request api ${f(run.apiCpuMsPerRequest, 3)}, Postgres ${f(run.postgresCpuMsPerRequest, 3)}; ${f(run.statementsPerRequest, 2)} statements, ${f(run.walBytesPerRequest)} WAL B`,
      ]);
    }
  }
  return rows;
}
