// The minimal debit endpoint's side of the spend phase (baselines/minimal-debit.mjs): its own two
// tables, as an app developer would make them in an afternoon, its prefunded wallets, and pgbench
// running the endpoint's transaction on them (the upper bound of any endpoint doing that work).
import { writeFileSync } from 'node:fs';
import { scriptPath } from './pgbench.mjs';

/**
 * A wallet per user with its balance (never below zero), and a ledger whose rows each carry the
 * app's reference, unique: the debit's fence. Two indexes on the ledger (its id, its reference)
 * and the wallet it belongs to, as one writes them without thinking of speed.
 */
export const minimalSpendDdl = `
CREATE TABLE minimal_wallets (
  user_id text PRIMARY KEY,
  balance bigint NOT NULL CHECK (balance >= 0));
CREATE TABLE minimal_ledger (
  id bigserial PRIMARY KEY,
  user_id text NOT NULL REFERENCES minimal_wallets (user_id),
  reference text NOT NULL UNIQUE,
  amount bigint NOT NULL,
  balance_after bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now())`;

/** The minimal wallets' user ids: `min-user-<i>` (pgbench derives them from a number). */
export const minimalUserId = (index) => `min-user-${index}`;

/** What each minimal wallet starts with: as much as Tally's prefunded users (lib/tally-api.mjs). */
export const minimalPrefund = 1_000_000_000;

/** Creates the tables and `count` wallets holding `minimalPrefund` each; returns their user ids. */
export async function createMinimalWallets(pool, count) {
  await pool.query(minimalSpendDdl);
  await pool.query(
    "INSERT INTO minimal_wallets (user_id, balance) SELECT 'min-user-' || g, $2::bigint FROM generate_series(0, $1 - 1) AS g",
    [count, minimalPrefund],
  );
  return Array.from({ length: count }, (_, i) => minimalUserId(i));
}

/**
 * The minimal endpoint's transaction for a debit of 1 (its happy path, statement for statement):
 * the wallet locked, the ledger row under a fresh reference, the balance moved, commit. A random
 * user of `:users` (1: the hot wallet), references `pgb:<round>:<client>:<n>` (run with
 * `-D round=<a number of this run> -D n=0`): unique within the run.
 */
export function minimalDebitScript() {
  const file = scriptPath('minimal-debit.sql');
  const user = "('min-user-' || :uid)";
  writeFileSync(
    file,
    [
      '\\set uid random(0, :users - 1)',
      '\\set n :n + 1',
      'BEGIN;',
      `SELECT balance AS before FROM minimal_wallets WHERE user_id = ${user} FOR UPDATE \\gset`,
      '\\set after :before - 1',
      `INSERT INTO minimal_ledger (user_id, reference, amount, balance_after) VALUES (${user}, 'pgb:' || :round || ':' || :client_id || ':' || :n, -1, :after) ON CONFLICT (reference) DO NOTHING RETURNING id;`,
      `UPDATE minimal_wallets SET balance = :after WHERE user_id = ${user};`,
      'COMMIT;',
      '',
    ].join('\n'),
  );
  return file;
}

/** Wallets whose balance is not their prefund less their ledger's debits (0: every debit moved its wallet once). */
export async function minimalWalletsOff(pool) {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS off FROM minimal_wallets w
      WHERE w.balance <> $1::bigint + (SELECT coalesce(sum(amount), 0) FROM minimal_ledger l WHERE l.user_id = w.user_id)`,
    [minimalPrefund],
  );
  return rows[0].off;
}
