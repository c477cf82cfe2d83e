// `node bench/idempotency.mjs` (after `pnpm build`): what an Idempotency-Key costs the studio
// POST. The built api runs against a private database and queue prefix; autocannon sends paid
// studio requests (a full song, 15 tokens, from prefunded users) without a key and with a fresh
// key per request, in alternating rounds, and prints the median latency and throughput of both
// and their ratio (target: the keyed POST at most 1.10x the latency of the plain one). Not part
// of `pnpm bench` yet; the same private resources and clean-up as the bench (bench/README.md).
//
// Settings: BENCH_IDEM_CONNECTIONS (10), BENCH_IDEM_SECONDS (8), BENCH_IDEM_ROUNDS (3),
// BENCH_IDEM_USERS (1000); BENCH_PROFILE=smoke runs one 1 s round.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort, startNode, stopAll, waitForHttp } from './lib/processes.mjs';
import { BenchResources, benchPool } from './lib/resources.mjs';
import { median, ratio, round } from './lib/stats.mjs';
import { root } from './lib/workspace.mjs';

const smoke = process.env.BENCH_PROFILE === 'smoke';
const num = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const settings = {
  connections: num('BENCH_IDEM_CONNECTIONS', 10),
  seconds: num('BENCH_IDEM_SECONDS', smoke ? 1 : 8),
  rounds: num('BENCH_IDEM_ROUNDS', smoke ? 1 : 3),
  users: num('BENCH_IDEM_USERS', 1000),
  warmupSeconds: smoke ? 0 : 2,
};
const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const serverUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const resources = new BenchResources({ serverUrl, redisUrl, runId });
const appKey = `app_bench_${runId}`;
const body = JSON.stringify({ kind: 'music', durationSeconds: 120, full: true, input: { prompt: 'bench' } });

/** Users with a large balance, so every request is paid (request row + debit) and none runs short. */
async function prefundUsers(pool) {
  const ids = Array.from({ length: settings.users }, (_, i) => `idem-bench-${runId}-${i}`);
  await pool.query('INSERT INTO users (id) SELECT unnest($1::text[])', [ids]);
  await pool.query('INSERT INTO wallets (user_id) SELECT unnest($1::text[])', [ids]);
  await pool.query(
    `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
     SELECT id, 'bench:grant:' || id, 1000000000, 0, 1000000000, 'bench_grant' FROM unnest($1::text[]) AS id`,
    [ids],
  );
  // The free music allowance of the day (2) is used up by two free rows per user.
  const day = new Date().toISOString().slice(0, 10);
  await pool.query(
    `INSERT INTO studio_requests (user_id, kind, duration_seconds, input, price_tokens, tokens_charged, free_tier, usage_day, status)
     SELECT id, 'music', 5, '{}', 5, 0, true, $2::date, 'received' FROM unnest($1::text[]) AS id, generate_series(1, 2)`,
    [ids, day],
  );
  return ids;
}

async function run(apiUrl, users, { keyed, seconds }) {
  let sent = 0;
  const result = await autocannon({
    url: apiUrl,
    method: 'POST',
    connections: settings.connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${appKey}` },
    requests: [
      {
        setupRequest: (request) => {
          const user = users[sent % users.length];
          sent += 1;
          const headers = keyed
            ? { ...request.headers, 'idempotency-key': `bench-${runId}-${keyed}-${sent}` }
            : request.headers;
          return { ...request, path: `/v1/users/${user}/studio/requests`, body, headers };
        },
      },
    ],
  });
  return {
    rps: result['2xx'] / result.duration,
    meanMs: result.latency.mean,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function main() {
  await resources.prepareTemplate();
  const databaseUrl = await resources.database('idem');
  const pool = benchPool(databaseUrl);
  const users = await prefundUsers(pool);
  const port = await freePort();
  const api = startNode('api', path.join(root, 'apps/api/dist/main.js'), {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: resources.prefix('idem'),
    API_PORT: String(port),
    APP_API_KEYS: appKey,
    ADMIN_API_KEYS: `admin_bench_${runId}`,
    LOG_LEVEL: 'warn',
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(api, `${apiUrl}/healthz`);
  if (settings.warmupSeconds > 0) {
    await run(apiUrl, users, { keyed: 'warm', seconds: settings.warmupSeconds });
    await run(apiUrl, users, { keyed: false, seconds: settings.warmupSeconds });
  }
  const rounds = { plain: [], keyed: [] };
  for (let r = 0; r < settings.rounds; r += 1) {
    // Alternating order, a CHECKPOINT before every run (as the bench does).
    const order = r % 2 === 0 ? ['plain', 'keyed'] : ['keyed', 'plain'];
    for (const contender of order) {
      await pool.query('CHECKPOINT');
      const figures = await run(apiUrl, users, {
        keyed: contender === 'keyed' ? `r${r}` : false,
        seconds: settings.seconds,
      });
      if (figures.non2xx > 0 || figures.errors > 0) {
        throw new Error(`${contender} run answered ${figures.non2xx} non-2xx and ${figures.errors} errors`);
      }
      rounds[contender].push(figures);
    }
  }
  const [{ count: keys }] = (await pool.query('SELECT count(*)::int AS count FROM idempotency_keys')).rows;
  await pool.end();
  await api.stop();

  const figure = (contender, field) => median(rounds[contender].map((run) => run[field]));
  const meanRatio = ratio(figure('keyed', 'meanMs'), figure('plain', 'meanMs'));
  const rows = [
    ['', 'no key', 'Idempotency-Key', 'keyed / plain'],
    ...['meanMs', 'p50Ms', 'p99Ms', 'rps'].map((field) => [
      field,
      String(round(figure('plain', field), 2)),
      String(round(figure('keyed', field), 2)),
      String(round(ratio(figure('keyed', field), figure('plain', field)), 3)),
    ]),
  ];
  process.stdout.write(
    `studio POST (paid full song), ${settings.connections} connections, ${settings.rounds} x ${settings.seconds} s rounds, median\n`,
  );
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) process.stdout.write(`  ${row.map((cell, i) => cell.padStart(widths[i])).join('  ')}\n`);
  process.stdout.write(
    `mean latency keyed / plain: ${round(meanRatio, 3)}x (target <= 1.10x: ${meanRatio <= 1.1 ? 'met' : 'MISSED'}); ${keys} keys stored\n`,
  );
  process.stdout.write(`${JSON.stringify({ settings, rounds })}\n`);
}

let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  await stopAll();
  await resources.cleanup();
}
process.once('SIGINT', () => {
  void cleanup().finally(() => process.exit(130));
});
main()
  .then(cleanup)
  .catch(async (error) => {
    process.stderr.write(`bench/idempotency: ${error.stack ?? error}\n`);
    await cleanup();
    process.exit(1);
  });
