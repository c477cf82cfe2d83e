// Baseline: a bare BullMQ worker (concurrency 8 by default) running the statements of Tally's
// credit transaction for a Stripe token pack, one statement per step as straightforward code
// would: the claim (inbox/inbox-transitions.ts), then one transaction: per-user advisory lock, row
// lock, user and wallet, the Stripe customer mapping (stripe-customers.ts), wallet lock and
// reference look-up, the ledger row (post-ledger-entry.ts), the payment and its confirmation
// email row (record-payment.ts), and the row marked processed. Plain pg, no Kysely, no body
// parsing (user, customer and payment intent come from the claimed row's columns; the receipt
// email is the bench events' constant), no logging.
//
// Env: DATABASE_URL, REDIS_URL, QUEUE_PREFIX, CONCURRENCY.
import { bullmq, loadAdvisoryLocks, pg, Redis } from '../lib/workspace.mjs';

const concurrency = Number(process.env.CONCURRENCY ?? 8);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: concurrency + 4 });
pool.on('error', () => undefined);
const { USER_LOCK_NAMESPACE } = loadAdvisoryLocks();
const MAX_ATTEMPTS = 15;
const receiptEmail = 'buyer@example.com';

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
    const customerId = claimed.provider_customer_id;
    const mapped = await client.query(
      'INSERT INTO stripe_customers (customer_id, user_id) VALUES ($1, $2) ON CONFLICT (customer_id) DO NOTHING RETURNING user_id',
      [customerId, userId],
    );
    if (mapped.rowCount === 0)
      await client.query('SELECT user_id FROM stripe_customers WHERE customer_id = $1', [customerId]);
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
    const payment = (
      await client.query(
        `INSERT INTO payments (provider_payment_id, user_id, kind, product_id, amount_minor, currency, ledger_reference,
           tokens_granted, customer_email, inbox_event_id)
         VALUES ($1, $2, 'token_pack', 'tokens_100', 499, 'usd', $3, $4, $5, $6)
         ON CONFLICT (provider, provider_payment_id) DO NOTHING RETURNING *`,
        [claimed.provider_payment_intent_id, userId, reference, amount, receiptEmail, inboxEventId],
      )
    ).rows[0];
    if (payment) {
      await client.query(
        `INSERT INTO email_outbox (payment_id, user_id, to_address, subject, body) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (payment_id) DO NOTHING`,
        [
          payment.id,
          userId,
          receiptEmail,
          'Your token purchase',
          `Thank you: ${amount} tokens were added to your wallet.`,
        ],
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
