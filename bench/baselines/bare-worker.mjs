// Baseline: a bare BullMQ worker (concurrency 8 by default) running the SQL statements Tally's
// worker runs to credit a Stripe token pack (process-inbox-event.ts claim, then one transaction:
// per-user advisory lock, row lock, ensure-wallet.ts's two inserts, post-ledger-entry.ts's wallet
// lock, reference look-up and ledger insert, and the row marked processed). Plain pg, no Kysely,
// no body parsing (user and payment intent come from the claimed row's columns), no logging.
//
// Env: DATABASE_URL, REDIS_URL, QUEUE_PREFIX, CONCURRENCY.
import { bullmq, pg, Redis } from '../lib/workspace.mjs';

const concurrency = Number(process.env.CONCURRENCY ?? 8);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: concurrency + 4 });
pool.on('error', () => undefined);
const USER_LOCK_NAMESPACE = 7411001;
const MAX_ATTEMPTS = 15;

const claimSql = `UPDATE inbox_events SET
    status = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN 'failed' ELSE 'processing' END,
    attempts = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN attempts ELSE attempts + 1 END,
    next_attempt_at = NULL, updated_at = now()
  WHERE id = $1 AND status IN ('received', 'processing') RETURNING *`;

async function creditTokenPack(client, inboxEventId) {
  const claimed = (await client.query(claimSql, [inboxEventId])).rows[0];
  if (claimed?.status !== 'processing') return 'skipped';
  const userId = claimed.user_id;
  const reference = `stripe:payment:${claimed.provider_payment_intent_id}`;
  const amount = 100;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [USER_LOCK_NAMESPACE, userId]);
    await client.query('SELECT status FROM inbox_events WHERE id = $1 FOR UPDATE', [inboxEventId]);
    await client.query('INSERT INTO users (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [userId]);
    await client.query('INSERT INTO wallets (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING', [userId]);
    const wallet = (await client.query('SELECT balance FROM wallets WHERE user_id = $1 FOR UPDATE', [userId])).rows[0];
    const existing = (await client.query('SELECT * FROM ledger_entries WHERE reference = $1', [reference])).rows[0];
    if (!existing) {
      const before = Number(wallet.balance);
      await client.query(
        `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason, inbox_event_id)
         VALUES ($1, $2, $3, $4, $5, 'token_pack_purchase', $6) ON CONFLICT (reference) DO NOTHING RETURNING *`,
        [userId, reference, amount, before, before + amount, inboxEventId],
      );
    }
    await client.query(
      `UPDATE inbox_events SET status = 'processed', outcome_code = 'credited', outcome_detail = $2,
         last_error = NULL, next_attempt_at = NULL, waiting_since = NULL, processed_at = now(), updated_at = now()
       WHERE id = $1 RETURNING *`,
      [inboxEventId, `credited ${amount} tokens (tokens_100)`],
    );
    await client.query('COMMIT');
    return 'processed';
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

const connection = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
connection.on('error', () => undefined);
const worker = new bullmq.Worker(
  'inbox',
  async (job) => {
    const client = await pool.connect();
    try {
      return await creditTokenPack(client, job.data.inboxEventId);
    } finally {
      client.release();
    }
  },
  { connection, prefix: process.env.QUEUE_PREFIX, concurrency },
);
worker.on('error', () => undefined);

const stop = async () => {
  await worker.close().catch(() => undefined);
  connection.disconnect();
  await pool.end().catch(() => undefined);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
