// What the spend phase checks and counts on its database: the guarantees both endpoints answer
// alike, the debits a run wrote (its figures are per debit written: a closed loop's last
// requests are answered after its deadline, uncounted, yet their work is in the run's CPU and
// statements), and that every wallet moved by exactly its debits.
import { minimalWalletsOff } from '../lib/minimal-spend.mjs';

/** Where a target's debits are written: Tally's ledger or the minimal endpoint's. */
export const ledgerOf = (target) => (target.startsWith('tally') ? 'ledger_entries' : 'minimal_ledger');

/** The ledger's newest id now: debitsSince counts what came after it. */
export async function ledgerMark(pool, table) {
  return Number((await pool.query(`SELECT coalesce(max(id), 0)::bigint AS id FROM ${table}`)).rows[0].id);
}

/**
 * Debits written after `mark`, once the servers finished what was in flight (no other connection
 * of the database in a statement or a transaction, 5 s at most).
 */
export async function debitsSince(pool, table, mark) {
  for (let i = 0; i < 50; i += 1) {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS busy FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
          AND state IN ('active', 'idle in transaction')`,
    );
    if (rows[0].busy === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE id > $1`, [mark])).rows[0].n;
}

/**
 * The guarantees both endpoints give, checked on each before it is measured: a debit answers 201,
 * its retry (same reference, same amount) 200 with the same balance, the same reference with
 * another amount 409 (the wallet moved once: checkWallets).
 */
export async function checkGuarantees(name, url, user, appKey) {
  const post = async (body) => {
    const response = await fetch(`${url}/v1/users/${user}/debits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${appKey}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const first = await post({ amount: 3, reference: 'guarantee-check' });
  const retry = await post({ amount: 3, reference: 'guarantee-check' });
  const conflict = await post({ amount: 4, reference: 'guarantee-check' });
  const seen = [first.status, retry.status, conflict.status].join(', ');
  if (seen !== '201, 200, 409' || retry.body.balance !== first.body.balance) {
    throw new Error(
      `spend ${name}: a debit, its retry and a conflict answered ${seen} (201, 200, 409 expected), balances ${first.body.balance} and ${retry.body.balance}`,
    );
  }
}

/**
 * Every wallet moved by exactly its debits, on both sides (Tally's lots too), and at least as many
 * debits written as answered 201 (`answered`: per side, the guarantee checks' included): else it throws.
 */
export async function checkWallets(pool, answered) {
  const tally = (
    await pool.query(
      `SELECT (SELECT count(*)::int FROM wallets w WHERE w.balance <> (SELECT sum(amount) FROM ledger_entries e WHERE e.user_id = w.user_id)) AS off,
              (SELECT count(*)::int FROM wallets w WHERE w.balance <> (SELECT sum(remaining) FROM credit_lots l WHERE l.user_id = w.user_id)) AS lots_off,
              (SELECT count(*)::int FROM ledger_entries WHERE amount < 0) AS debits`,
    )
  ).rows[0];
  const checks = {
    tallyWalletsOff: tally.off,
    tallyLotsOff: tally.lots_off,
    tallyDebitsWritten: tally.debits,
    tallyDebitsAnswered: answered.tally,
    minimalWalletsOff: await minimalWalletsOff(pool),
    minimalDebitsWritten: (await pool.query('SELECT count(*)::int AS n FROM minimal_ledger')).rows[0].n,
    minimalDebitsAnswered: answered.minimal,
  };
  const off = checks.tallyWalletsOff + checks.tallyLotsOff + checks.minimalWalletsOff;
  if (off > 0 || checks.tallyDebitsWritten < answered.tally || checks.minimalDebitsWritten < answered.minimal) {
    throw new Error(`spend: the wallets do not add up: ${JSON.stringify(checks)}`);
  }
  return checks;
}
