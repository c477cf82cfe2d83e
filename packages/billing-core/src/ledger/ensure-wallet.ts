// guard: billing-core-platform-db-import
import { precompiledSql } from '@tally/platform/db';
import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/**
 * Creates the user and an empty wallet if they do not exist, in one statement (the foreign key
 * is checked at the end of the statement, when the user row exists). Idempotent; joins the
 * caller's unit of work; a second call for the same user in one unit costs no round trip
 * (UnitOfWork.walletsEnsured).
 */
export async function ensureWallet(uow: UnitOfWork, userId: string): Promise<void> {
  if (uow.walletsEnsured.has(userId)) return;
  await createWalletIfMissing(uow.trx, userId);
  markWalletEnsured(uow, userId);
}

/**
 * ensureWallet's statement alone, for a transaction that moves no money and writes no message
 * (a pending top-up row): no unit of work, so nothing remembers that it ran.
 */
export async function createWalletIfMissing(trx: Transaction<DB>, userId: string): Promise<void> {
  await ensureWalletSql(trx, { userId });
}

const ensureWalletSql = precompiledSql<{ userId: string }>((s) => sql`WITH ${ensureWalletCtes(s.userId)} SELECT 1`);

/**
 * The two inserts that create a user and an empty wallet if missing, as CTEs (`new_user`,
 * `new_wallet`) another statement can start with to save a round trip; the foreign keys are
 * checked at the end of that statement, when the user row exists. Call markWalletEnsured after.
 */
export function ensureWalletCtes(userId: string) {
  return ensureWalletsCtes(sql`VALUES (${userId})`);
}

/**
 * ensureWalletCtes for the users a query gives (one text column; `VALUES (…)` or a `SELECT`
 * from an earlier CTE, so a statement can create them only when it needs them).
 */
export function ensureWalletsCtes(userIds: RawBuilder<unknown>) {
  return sql`new_user AS (INSERT INTO users (id) ${userIds} ON CONFLICT (id) DO NOTHING),
    new_wallet AS (INSERT INTO wallets (user_id) ${userIds} ON CONFLICT (user_id) DO NOTHING)`;
}

/**
 * Records that a statement the caller just ran in `uow.trx` created the user and wallet if missing
 * (the same two inserts as ensureWallet, folded into a bigger statement to save a round trip).
 */
export function markWalletEnsured(uow: UnitOfWork, userId: string): void {
  uow.walletsEnsured.add(userId);
}
