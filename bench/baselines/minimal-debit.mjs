// Baseline: the debit endpoint an app developer writes in an afternoon with the guarantees of
// Tally's `POST /v1/users/{userId}/debits`: Express + pg, the app key checked, the body checked,
// and per request ONE transaction on its own tables (lib/minimal-spend.mjs): the wallet row locked
// (FOR UPDATE), one ledger row under the app's unique reference, the balance moved, answered after
// the commit. The reference is the fence: debited before with the same amount and user, the first
// result again (200); with another, a conflict (409); short, 402 and nothing written. One
// statement per step, no logging, no metrics.
//
// Env: PORT, DATABASE_URL, APP_KEY, POOL_SIZE (10, Tally's api pool).
import { createServer } from 'node:http';
import { express, pg } from '../lib/workspace.mjs';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
pool.on('error', () => undefined);
const authorization = `Bearer ${process.env.APP_KEY}`;
const referencePattern = /^[A-Za-z0-9._:-]{1,200}$/;

/** The first debit under `reference` as its answer, or the conflict it is for this request. */
function previousAnswer(previous, userId, amount) {
  if (previous.user_id !== userId || Number(previous.amount) !== -amount) {
    return { status: 409, body: { error: { code: 'reference_conflict' } } };
  }
  const balance = Number(previous.balance_after);
  return { status: 200, body: { ledgerReference: previous.reference, amount, balance } };
}

async function debit(userId, reference, amount) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const wallet = await client.query('SELECT balance FROM minimal_wallets WHERE user_id = $1 FOR UPDATE', [userId]);
    if (wallet.rowCount === 0) {
      await client.query('ROLLBACK');
      return { status: 404, body: { error: { code: 'user_not_found' } } };
    }
    const balance = Number(wallet.rows[0].balance);
    if (balance >= amount) {
      const entry = await client.query(
        `INSERT INTO minimal_ledger (user_id, reference, amount, balance_after) VALUES ($1, $2, $3, $4)
         ON CONFLICT (reference) DO NOTHING RETURNING id`,
        [userId, reference, -amount, balance - amount],
      );
      if (entry.rowCount === 1) {
        await client.query('UPDATE minimal_wallets SET balance = $2 WHERE user_id = $1', [userId, balance - amount]);
        await client.query('COMMIT');
        return { status: 201, body: { ledgerReference: reference, amount, balance: balance - amount } };
      }
    }
    // The reference taken (a retry, or another debit's), or the wallet short: nothing is written.
    const previous = await client.query(
      'SELECT reference, user_id, amount, balance_after FROM minimal_ledger WHERE reference = $1',
      [reference],
    );
    await client.query('ROLLBACK');
    if (previous.rowCount === 1) return previousAnswer(previous.rows[0], userId, amount);
    return { status: 402, body: { error: { code: 'insufficient_balance' }, available: balance } };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => res.json({ ok: true }));
app.post('/v1/users/:userId/debits', express.json(), async (req, res) => {
  if (req.get('authorization') !== authorization) return res.status(401).json({ error: { code: 'unauthorized' } });
  const { amount, reference } = req.body ?? {};
  if (
    !Number.isSafeInteger(amount) ||
    amount <= 0 ||
    typeof reference !== 'string' ||
    !referencePattern.test(reference)
  ) {
    return res.status(400).json({ error: { code: 'invalid_request' } });
  }
  try {
    const answer = await debit(req.params.userId, `debit:${reference}`, amount);
    res.status(answer.status).json(answer.body);
  } catch (error) {
    res.status(503).json({ error: { code: 'database_unavailable', message: String(error.message) } });
  }
});

const server = createServer(app).listen(Number(process.env.PORT), '127.0.0.1');
server.keepAliveTimeout = 5000;
const stop = async () => {
  server.close();
  await pool.end().catch(() => undefined);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
