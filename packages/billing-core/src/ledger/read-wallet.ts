import { type Kysely, sql } from 'kysely';
import { readKeysetPage } from '../db/keyset-page';
import type { DB, LedgerEntryRow, LotCategory } from '../db/schema';
import { heldByLot } from './held-tokens';

/** A lot with tokens left (docs/lots.md). */
export interface LotView {
  id: number;
  category: LotCategory;
  source: string;
  amount: number;
  remaining: number;
  /** What of `remaining` active holds reserve (docs/holds.md). */
  held: number;
  expiresAt: Date | null;
  createdAt: Date;
}

export interface WalletView {
  userId: string;
  balance: number;
}

/** The wallet of a user; a user Tally has never credited has a balance of 0. Its lots: listLots. */
export async function findWallet(db: Kysely<DB>, userId: string): Promise<WalletView> {
  const row = await db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst();
  return { userId, balance: row?.balance ?? 0 };
}

/** A user's lots with tokens left, in the draw order, each with what active holds reserve of it. */
export async function listLots(db: Kysely<DB>, userId: string): Promise<LotView[]> {
  // The view's columns, its two times under their column names.
  const rows = await sql<Omit<LotView, 'expiresAt' | 'createdAt'> & { expires_at: Date | null; created_at: Date }>`
    WITH held AS (${heldByLot(userId)})
    SELECT l.id, l.category, l.source, l.amount, l.remaining, coalesce(h.held, 0)::bigint AS held,
           l.expires_at, l.created_at
      FROM credit_lots l LEFT JOIN held h ON h.lot_id = l.id
     WHERE l.user_id = ${userId} AND l.remaining > 0
     ORDER BY l.expires_at NULLS LAST, l.draw_rank, l.id`.execute(db);
  return rows.rows.map((lot) => ({
    id: Number(lot.id),
    category: lot.category,
    source: lot.source,
    amount: Number(lot.amount),
    remaining: Number(lot.remaining),
    held: Number(lot.held),
    expiresAt: lot.expires_at === null ? null : new Date(lot.expires_at),
    createdAt: new Date(lot.created_at),
  }));
}

/** What one entry drew from (a debit) or returned to (a give-back) a lot. */
export interface LedgerDrawView {
  lotId: number;
  amount: number;
}

export type LedgerEntryWithDraws = LedgerEntryRow & { draws: LedgerDrawView[] };

export interface LedgerPage {
  entries: LedgerEntryWithDraws[];
  /** Pass back as `beforeId` for the next (older) page; null on the last page. */
  nextCursor: number | null;
}

/** A user's ledger, newest first, in pages; each entry with its draws (none for most credits). */
export async function listLedgerEntries(
  db: Kysely<DB>,
  userId: string,
  options: { limit: number; beforeId?: number | undefined },
): Promise<LedgerPage> {
  const { page, next } = await readKeysetPage(
    db.selectFrom('ledger_entries').selectAll().where('user_id', '=', userId),
    options,
  );
  const draws =
    page.length === 0
      ? []
      : await db
          .selectFrom('ledger_draws')
          .select(['ledger_entry_id', 'lot_id', 'amount'])
          .where(
            'ledger_entry_id',
            'in',
            page.map((entry) => entry.id),
          )
          .orderBy('ledger_entry_id')
          .orderBy('lot_id')
          .execute();
  const byEntry = new Map<number, LedgerDrawView[]>();
  for (const draw of draws) {
    const list = byEntry.get(draw.ledger_entry_id) ?? [];
    list.push({ lotId: draw.lot_id, amount: draw.amount });
    byEntry.set(draw.ledger_entry_id, list);
  }
  const entries = page.map((entry) => ({ ...entry, draws: byEntry.get(entry.id) ?? [] }));
  return { entries, nextCursor: next?.id ?? null };
}
