// `node bench/app-webhooks.mjs` (after `tsc -b`; Postgres and Redis as for the tests): what the
// app-webhook outbox costs and delivers, on its own database and queue prefix.
//  1. Write cost: sequential money transactions (BEGIN, postLedgerEntry, COMMIT) with the
//     outbox CTE as shipped, against the same two statements without it, interleaved in rounds.
//  2. Delivery throughput: messages already written for many users, drained by one worker
//     runtime (relay + app-webhooks roles) to a local receiver that verifies every delivery
//     with the Standard Webhooks library and answers 204.
// Not part of `npm run bench` (its targets are the inbox's); the figures go in docs/app-webhooks.md.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './lib/workspace.mjs';

const fromCore = createRequire(path.join(root, 'packages/billing-core/package.json'));
const core = fromCore(path.join(root, 'packages/billing-core/dist/index.js'));
const testing = fromCore(path.join(root, 'packages/billing-core/dist/testing/index.js'));
const { sql } = fromCore('kysely');
const { Webhook } = fromCore('standardwebhooks');
const fromWorker = createRequire(path.join(root, 'apps/worker/package.json'));
const { startWorkerRuntime } = fromWorker(path.join(root, 'apps/worker/dist/worker-runtime.js'));
const { workerEnvSchema } = fromWorker(path.join(root, 'apps/worker/dist/config.js'));
const { workerSettingsFrom } = fromWorker(path.join(root, 'apps/worker/dist/settings-from-config.js'));
const platform = createRequire(path.join(root, 'apps/worker/package.json'))('@tally/platform');

const ROUNDS = Number(process.env.ROUNDS ?? 4);
const PER_ROUND = Number(process.env.PER_ROUND ?? 500);
const MESSAGES = Number(process.env.MESSAGES ?? 2000);
const USERS = Number(process.env.USERS ?? 100);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);

const database = await testing.createTestDatabase();
const { db } = database;
try {
  // 1. Write cost.
  const withOutbox = async (userId, i) =>
    db
      .transaction()
      .execute((trx) =>
        core.postLedgerEntry(trx, { userId, reference: `bench:with:${userId}:${i}`, amount: 1, reason: 'bench' }),
      );
  const withoutOutbox = async (userId, i) =>
    db.transaction().execute(async (trx) => {
      const locked = (
        await sql`SELECT w.balance AS wallet_balance, l.id FROM wallets w
                    LEFT JOIN ledger_entries l ON l.reference = ${`bench:without:${userId}:${i}`}
                   WHERE w.user_id = ${userId} FOR UPDATE OF w`.execute(trx)
      ).rows[0];
      await sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
                VALUES (${userId}, ${`bench:without:${userId}:${i}`}, 1, ${locked.wallet_balance},
                        ${Number(locked.wallet_balance) + 1}, 'bench')
                ON CONFLICT (reference) DO NOTHING RETURNING *`.execute(trx);
    });
  for (const userId of ['bench-with', 'bench-without']) {
    await db.transaction().execute((trx) => core.ensureWallet(trx, userId));
  }
  const timings = { with: [], without: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, post] of [
      ['without', withoutOutbox],
      ['with', withOutbox],
    ]) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < PER_ROUND; i += 1) await post(`bench-${name}`, round * PER_ROUND + i);
      timings[name].push(Number(process.hrtime.bigint() - started) / 1e6 / PER_ROUND);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const perTx = { with: median(timings.with), without: median(timings.without) };
  console.log(
    `write cost: ${perTx.without.toFixed(3)} ms per money transaction without the outbox, ` +
      `${perTx.with.toFixed(3)} ms with it (x${(perTx.with / perTx.without).toFixed(2)}; median of ${ROUNDS} rounds of ${PER_ROUND})`,
  );

  // 2. Delivery throughput.
  await sql`UPDATE app_webhook_messages SET status = 'delivered', delivered_at = now()`.execute(db);
  for (let i = 0; i < MESSAGES; i += 1) {
    const userId = `bench-user-${i % USERS}`;
    await db
      .transaction()
      .execute((trx) => core.postLedgerEntry(trx, { userId, reference: `bench:msg:${i}`, amount: 1, reason: 'bench' }));
  }
  const secret = `whsec_${Buffer.from('tally-bench-app-webhook-secret!!').toString('base64')}`;
  const verifier = new Webhook(secret);
  let received = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers);
      received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/hooks`;
  const defaults = workerSettingsFrom(workerEnvSchema.parse({ DATABASE_URL: 'postgres://unused' }));
  const started = Date.now();
  const runtime = startWorkerRuntime({
    db,
    handlers: {},
    logger: platform.createLogger({ name: 'bench', level: 'silent' }),
    redisUrl: testing.testRedisUrl(),
    queuePrefix: testing.uniqueQueuePrefix(),
    roles: ['relay', 'app-webhooks'],
    // The config schema's defaults (the only place with them), with the bench's relay and schedule.
    settings: {
      ...defaults,
      drainTimeoutMs: 5_000,
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 60_000, batchSize: 500 },
      appWebhooks: { concurrency: CONCURRENCY, retryScheduleMs: [1_000], retentionDays: 30 },
    },
    ports: {
      aiStudio: undefined,
      stripe: undefined,
      mailer: undefined,
      appWebhookSender: core.createAppWebhookSender({ url, secrets: [secret], timeoutMs: 5_000 }),
    },
  });
  for (;;) {
    const row = (
      await sql`SELECT count(*)::int AS left FROM app_webhook_messages WHERE status <> 'delivered'`.execute(db)
    ).rows[0];
    if (row.left === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `delivery: ${MESSAGES} messages of ${USERS} users in ${seconds.toFixed(1)} s = ${(MESSAGES / seconds).toFixed(0)} messages/s ` +
      `(concurrency ${CONCURRENCY}, relay every 100 ms, receiver verifying each; ${received} POSTs received)`,
  );
  await runtime.stop();
  await new Promise((resolve) => server.close(resolve));
} finally {
  await database.drop();
}
