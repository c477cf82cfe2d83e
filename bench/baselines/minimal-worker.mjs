// Baseline: a minimal BullMQ worker giving the same guarantees as Tally's for one token pack,
// written plainly as a good engineer would without Tally: its own inbox table with one index
// (`minimal_inbox`, primary key = the provider's event id: the dedupe), and per job ONE
// transaction: the user's advisory lock, the inbox row locked and checked unfinished, user and
// wallet ensured, the wallet locked, the ledger row (its trigger credits the wallet) under its unique reference (a conflict
// rolls the whole transaction back), for FLOW=stripe the customer mapping, the payment row and
// its receipt email row, and the row marked processed; the mark commits with the effects.
// Plain pg, one statement per step, no logging.
//
// Env: DATABASE_URL, REDIS_URL, QUEUE_PREFIX, CONCURRENCY, FLOW (revenuecat | stripe).
import { bullmq, loadAdvisoryLocks, pg, Redis } from '../lib/workspace.mjs';

const concurrency = Number(process.env.CONCURRENCY ?? 8);
const flow = process.env.FLOW ?? 'revenuecat';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: concurrency + 2 });
pool.on('error', () => undefined);
const { USER_LOCK_NAMESPACE } = loadAdvisoryLocks();
const tokens = 100;

async function credit(client, eventId) {
  await client.query('BEGIN');
  try {
    const row = (
      await client.query(
        `WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock($2, hashtext(user_id)) FROM minimal_inbox WHERE event_id = $1)
         SELECT user_id, object_id, customer_id, status FROM minimal_inbox WHERE event_id = $1 AND (SELECT count(*) FROM l) >= 0 FOR UPDATE`,
        [eventId, USER_LOCK_NAMESPACE],
      )
    ).rows[0];
    if (row?.status !== 'received') {
      await client.query('ROLLBACK');
      return 'skipped';
    }
    const { user_id: userId, object_id: objectId } = row;
    await client.query('INSERT INTO users (id) VALUES ($1) ON CONFLICT DO NOTHING', [userId]);
    await client.query('INSERT INTO wallets (user_id) VALUES ($1) ON CONFLICT DO NOTHING', [userId]);
    // The ledger row's trigger moves the wallet from balance_before to balance_after.
    const before = Number(
      (await client.query('SELECT balance FROM wallets WHERE user_id = $1 FOR UPDATE', [userId])).rows[0].balance,
    );
    const after = before + tokens;
    const reference = flow === 'stripe' ? `stripe:payment:${objectId}` : `revenuecat:event:${eventId}`;
    const ledger = await client.query(
      `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
       VALUES ($1, $2, $3, $4, $5, 'token_pack_purchase') ON CONFLICT (reference) DO NOTHING`,
      [userId, reference, tokens, before, after],
    );
    if (ledger.rowCount === 0) {
      // Already credited: nothing of this attempt may stay.
      await client.query('ROLLBACK');
      return 'duplicate';
    }
    if (flow === 'stripe') {
      await client.query('INSERT INTO stripe_customers (customer_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
        row.customer_id,
        userId,
      ]);
      const payment = await client.query(
        `INSERT INTO payments (provider_payment_id, user_id, kind, product_id, amount_minor, currency, ledger_reference, tokens_granted, customer_email)
         VALUES ($1, $2, 'token_pack', 'tokens_100', 499, 'usd', $3, $4, 'buyer@example.com') RETURNING id`,
        [objectId, userId, reference, tokens],
      );
      await client.query(
        'INSERT INTO email_outbox (payment_id, user_id, to_address, subject, body) VALUES ($1, $2, $3, $4, $5)',
        [
          payment.rows[0].id,
          userId,
          'buyer@example.com',
          'Your token purchase',
          `Thank you: ${tokens} tokens were added.`,
        ],
      );
    }
    await client.query("UPDATE minimal_inbox SET status = 'processed', processed_at = now() WHERE event_id = $1", [
      eventId,
    ]);
    await client.query('COMMIT');
    return 'processed';
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

{
  const connection = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const worker = new bullmq.Worker(
    'minimal',
    async (job) => {
      const client = await pool.connect();
      try {
        return await credit(client, job.data.eventId);
      } finally {
        client.release();
      }
    },
    { connection, prefix: process.env.QUEUE_PREFIX, concurrency },
  );
  worker.on('error', () => undefined);
  worker.on('failed', (job, error) => process.stderr.write(`job ${job?.id} failed: ${error.message}\n`));
  const stop = async () => {
    await worker.close().catch(() => undefined);
    connection.disconnect();
    await pool.end().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
