import { sql, type Transaction } from 'kysely';
import { precompiledSql } from '../db/precompiled-sql';
import type { DB } from '../db/schema';

/**
 * Users whose wallet a transaction has already ensured. Users and wallets are never deleted, so
 * once the statement below ran in a transaction, the rows exist until it ends: a second call in
 * the same transaction (several steps of one event each ensure the user) costs no round trip.
 * Keyed by the transaction object, so the entry goes away with it (Tally uses no savepoints, so
 * nothing inside a transaction can undo the statement while the transaction goes on).
 */
const ensuredIn = new WeakMap<Transaction<DB>, Set<string>>();

/**
 * Creates the user and an empty wallet if they do not exist, in one statement (the foreign key
 * is checked at the end of the statement, when the user row exists). Idempotent; joins the
 * caller's transaction.
 */
export async function ensureWallet(trx: Transaction<DB>, userId: string): Promise<void> {
  if (ensuredIn.get(trx)?.has(userId)) return;
  await ensureWalletSql(trx, { userId });
  markWalletEnsured(trx, userId);
}

const ensureWalletSql = precompiledSql<{ userId: string }>((s) => sql`WITH ${ensureWalletCtes(s.userId)} SELECT 1`);

/**
 * The two inserts that create a user and an empty wallet if missing, as CTEs (`new_user`,
 * `new_wallet`) another statement can start with to save a round trip; the foreign keys are
 * checked at the end of that statement, when the user row exists. Call markWalletEnsured after.
 */
export function ensureWalletCtes(userId: string) {
  return sql`new_user AS (INSERT INTO users (id) VALUES (${userId}) ON CONFLICT (id) DO NOTHING),
    new_wallet AS (INSERT INTO wallets (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING)`;
}

/**
 * Records that a statement the caller just ran in `trx` created the user and wallet if missing
 * (the same two inserts as ensureWallet, folded into a bigger statement to save a round trip).
 */
export function markWalletEnsured(trx: Transaction<DB>, userId: string): void {
  const ensured = ensuredIn.get(trx);
  if (ensured) ensured.add(userId);
  else ensuredIn.set(trx, new Set([userId]));
}
