import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../db/schema';

/**
 * An active hold (docs/holds.md): stored `held`, not settled, and not past its expires_at by the
 * database clock. A hold past expires_at stops counting at once, with no sweep: this predicate is
 * the only definition, used by every reader of `held` (the wallet, spends, take-backs, the expiry
 * sweeper, new holds). The first two conditions are the predicate of `holds_open_idx`, so a
 * wallet's active holds are read from that index without scanning its history.
 */
export function activeHold(alias: string): RawBuilder<boolean> {
  const h = sql.ref(alias);
  // guard: active-hold-expiry
  return sql<boolean>`(${h}.status = 'held' AND ${h}.settled_at IS NULL AND ${h}.expires_at > now())`;
}

/** `lot_id, held`: what the user's active holds reserve of each lot (a subquery for a CTE). */
export function heldByLot(userId: string): RawBuilder<{ lot_id: number; held: number }> {
  return heldByLotOfUsers(sql`= ${userId}`);
}

/**
 * heldByLot of the users `userIs` matches (`= $1`, or `IN (…)` for a batch's users; a lot is one
 * user's, so its row is that user's).
 */
export function heldByLotOfUsers(userIs: RawBuilder<unknown>): RawBuilder<{ lot_id: number; held: number }> {
  return sql`
    SELECT hl.lot_id, sum(hl.amount)::bigint AS held
      FROM holds h JOIN hold_lots hl ON hl.hold_id = h.id
     WHERE h.user_id ${userIs} AND ${activeHold('h')}
     GROUP BY hl.lot_id`;
}

/** What a wallet holds, what its active holds reserve, and what is left: `available = balance − held`. */
export interface WalletFunds {
  balance: number;
  held: number;
  available: number;
}

/**
 * The wallet's funds, its row locked FOR UPDATE first when `lock` (every writer of holds or lots
 * takes the wallet row first, as postLedgerEntry does, so concurrent holds and spends serialize
 * and `available` cannot change under the caller). A wallet that does not exist has nothing.
 * With `lock`, `held` is read by a second statement, after the lock is granted: in READ
 * COMMITTED a statement that waited for the lock still reads with the snapshot it started with,
 * and would miss the hold the lock's previous holder just committed.
 */
export async function readWalletFunds(
  db: Kysely<DB>,
  userId: string,
  options: { lock: boolean },
): Promise<WalletFunds> {
  if (!options.lock) {
    const read = await sql<{ balance: number | null; held: number }>`
      SELECT (SELECT balance FROM wallets WHERE user_id = ${userId}) AS balance,
             (SELECT coalesce(sum(h.amount), 0) FROM holds h WHERE h.user_id = ${userId} AND ${activeHold('h')})::bigint AS held`.execute(
      db,
    );
    return fundsOf(Number(read.rows[0]?.balance ?? 0), Number(read.rows[0]?.held ?? 0));
  }
  const wallet = await sql<{ balance: number }>`
    SELECT balance FROM wallets WHERE user_id = ${userId} FOR UPDATE`.execute(db);
  const held = await sql<{ held: number }>`
    SELECT coalesce(sum(h.amount), 0)::bigint AS held FROM holds h
     WHERE h.user_id = ${userId} AND ${activeHold('h')}`.execute(db);
  return fundsOf(Number(wallet.rows[0]?.balance ?? 0), Number(held.rows[0]?.held ?? 0));
}

export function fundsOf(balance: number, held: number): WalletFunds {
  return { balance, held, available: balance - held };
}
