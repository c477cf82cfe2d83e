import { sql, type Transaction } from 'kysely';
import type { DB, HoldRow } from '../db/schema';
import { type HoldViewStatus, holdViewColumns, listHolds, toHoldView } from '../holds/list-holds';
import { activeHold } from '../ledger/held-tokens';
import type { SupportHold, SupportHolds, SupportSubject } from './user-support-view';

/**
 * The canonical user's holds (docs/holds.md), bounded by `limit`: the active ones first (newest
 * first, from the open-holds index), then the newest ended ones (captured, released, expired)
 * until `limit` rows are shown; each with the lots it reserves. `activeTotal` counts every active
 * hold. Neither read scans the user's history: the active ones come from `holds_open_idx`, the
 * ended ones from `holds_user_idx` newest first, stopping at the limit.
 */
export async function readHoldsSection(
  trx: Transaction<DB>,
  { userId }: SupportSubject,
  limit: number,
): Promise<SupportHolds> {
  const active = await listHolds(trx, userId, { status: 'held', limit });
  const count = await sql<{ total: number }>`
    SELECT count(*)::int AS total FROM holds h WHERE h.user_id = ${userId} AND ${activeHold('h')}`.execute(trx);
  // guard: support-holds-limit
  const rest = limit - active.length;
  // guard: support-holds-ended-only
  const ended =
    rest <= 0
      ? []
      : (
          await sql<HoldRow & { view_status: HoldViewStatus }>`
            SELECT ${holdViewColumns} FROM holds h
             WHERE h.user_id = ${userId} AND NOT ${activeHold('h')}
             ORDER BY h.created_at DESC, h.id
             LIMIT ${rest}`.execute(trx)
        ).rows.map(toHoldView);
  // guard: support-holds-active-first
  const shown = [...active, ...ended];
  const lots =
    shown.length === 0
      ? []
      : (
          await sql<{ hold_id: string; lot_id: number; amount: number }>`
            SELECT hold_id, lot_id, amount FROM hold_lots
             WHERE hold_id IN (${sql.join(shown.map((hold) => hold.id))})
             ORDER BY hold_id, position`.execute(trx)
        ).rows;
  const items: SupportHold[] = shown.map((hold) => ({
    ...hold,
    lots: lots
      .filter((lot) => lot.hold_id === hold.id)
      .map((lot) => ({ lotId: Number(lot.lot_id), amount: Number(lot.amount) })),
  }));
  return { activeTotal: Number(count.rows[0]?.total ?? 0), items };
}
