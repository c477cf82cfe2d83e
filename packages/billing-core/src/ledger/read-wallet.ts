import type { Kysely } from 'kysely';
import type { DB, LedgerEntryRow } from '../db/schema';

export interface WalletView {
  userId: string;
  balance: number;
}

/** The wallet of a user; a user Tally has never credited has a balance of 0. */
export async function findWallet(db: Kysely<DB>, userId: string): Promise<WalletView> {
  const row = await db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst();
  return { userId, balance: row?.balance ?? 0 };
}

export interface LedgerPage {
  entries: LedgerEntryRow[];
  /** Pass back as `beforeId` for the next (older) page; null on the last page. */
  nextCursor: number | null;
}

/** A user's ledger, newest first, in pages. */
export async function listLedgerEntries(
  db: Kysely<DB>,
  userId: string,
  options: { limit: number; beforeId?: number | undefined },
): Promise<LedgerPage> {
  let query = db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(options.limit + 1);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  const rows = await query.execute();
  const entries = rows.slice(0, options.limit);
  const last = entries[entries.length - 1];
  return { entries, nextCursor: rows.length > options.limit && last ? last.id : null };
}
