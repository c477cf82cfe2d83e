import { randomBytes } from 'node:crypto';
import { sqlMilliseconds } from '@tally/platform/db';
import { type RawBuilder, sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import type { HoldRow } from '../db/schema';
import { ensureWalletCtes, markWalletEnsured } from '../ledger/ensure-wallet';
import { allocateDraws, listDrawableLots } from '../ledger/lots';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { type HoldView, type HoldViewStatus, holdViewColumns, toHoldView } from './list-holds';
import { type LockedSpendFunds, lockWalletForSpend } from './lock-wallet-funds';

/** HOLD_DEFAULT_TTL_SECONDS's default, and the longest a hold may live. */
export const defaultHoldTtlSeconds = 900;
export const maxHoldTtlSeconds = 86_400;

export interface HoldPlacement {
  /** The canonical user. */
  userId: string;
  /** The app's reference: one hold per (user, reference). */
  reference: string;
  /** Whole tokens, positive. */
  amount: number;
  reason: string;
  /** 1..maxHoldTtlSeconds; expires_at is counted from the database's now(). */
  expiresInSeconds: number;
  /** The defaults of the spend limits a hold counts against while active (docs/spend-limits.md). */
  spendLimits: SpendLimitDefaults;
}

export type PlaceHoldResult =
  /** `available`: the wallet's available right after the placement. */
  | { kind: 'placed'; hold: HoldView; available: number }
  /** The reference placed the same amount before: that hold (in whatever state it is now), nothing reserved now. */
  | { kind: 'existing'; hold: HoldView; available: number }
  /** The reference placed another amount: the caller's conflict (409). */
  | { kind: 'conflict'; message: string }
  /** What the wallet can reserve is short: nothing reserved. */
  | { kind: 'insufficient'; available: number; requested: number }
  /** A spend limit refuses what it would reserve (402 spend_limit_reached): nothing reserved. */
  | { kind: 'spend-limit'; refusal: SpendLimitRefusal };

/** A new hold's public id: `hold_` + 24 hex characters. */
export function newHoldId(): string {
  return `hold_${randomBytes(12).toString('hex')}`;
}

/**
 * Places a hold (docs/holds.md): reserves `amount` tokens from the unheld part of lots that have
 * not expired, in the draw order (hold_lots), in the caller's unit of work. The wallet row is
 * locked first (lockWalletFunds), so concurrent placements on one wallet serialize and each sees
 * what the ones before it reserved: ten concurrent holds of 30 on 100 give exactly three. The
 * reference is the placement's fence: under the lock, a second placement with it finds the first
 * (the unique (user_id, reference) backs it). No ledger row: a hold moves no money until captured.
 */
export async function placeHold(uow: UnitOfWork, placement: HoldPlacement): Promise<PlaceHoldResult> {
  const funds = await lockWalletForSpend(uow, placement.userId, { holdReference: placement.reference });
  const existing = funds.hold;
  if (existing) {
    if (Number(existing.amount) !== placement.amount) {
      return { kind: 'conflict', message: `reference ${placement.reference} already holds another amount` };
    }
    return {
      kind: 'existing',
      hold: toHoldView({ ...existing, view_status: existing.expired ? 'expired' : existing.status }),
      available: funds.available,
    };
  }
  return reserveHold(uow, funds, placement);
}

/**
 * Reserves a new hold under the wallet lock the caller took (`funds` as lockWalletForSpend read
 * them, no hold under the reference): placeHold's second half, and a priced hold's
 * (placePricedHold; `priced`, whose amount may be 0: a free use reserves the use, no tokens).
 * What it reserves counts against the spend limits as spent while the hold is active: past a
 * limit (spendLimitRefusal) it reserves nothing.
 */
export async function reserveHold(
  uow: UnitOfWork,
  funds: Pick<LockedSpendFunds, 'balance' | 'held' | 'available' | 'spend' | 'autoTopup'>,
  placement: HoldPlacement & {
    priced?: boolean;
    /** A statement written in the same round trip as the hold (a priced hold's use): given the new hold's id and available. */
    alongside?: (holdId: string, available: number) => RawBuilder<unknown>;
  },
): Promise<PlaceHoldResult> {
  const { trx } = uow;
  const insufficient = { kind: 'insufficient', requested: placement.amount } as const;
  const refusal = spendLimitRefusal(funds.spend, placement.spendLimits, funds.held, placement.amount);
  // guard: hold-spend-limit
  if (refusal) return { kind: 'spend-limit', refusal };
  if (funds.available < placement.amount) return { ...insufficient, available: Math.max(0, funds.available) };
  const lots = placement.amount === 0 ? [] : await listDrawableLots(trx, placement.userId, { spend: true, lock: true });
  const { draws, left } = allocateDraws(lots, placement.amount);
  // Available counts tokens of an expired lot the sweeper has not taken yet; they cannot be held.
  if (left > 0) return { ...insufficient, available: placement.amount - left };

  const id = newHoldId();
  // A hold of 0 (a free use, an estimate that costs nothing) can be a new user's first act: the
  // statement then creates the user and wallet the hold's row references (a hold of tokens has them).
  // guard: zero-hold-creates-wallet
  const wallet = placement.amount === 0 ? sql`${ensureWalletCtes(placement.userId)},` : sql``;
  // The hold, its marker and its lots in one statement.
  const lotIds = draws.map((d) => d.lotId);
  const amounts = draws.map((d) => d.amount);
  const inserted = await sql<HoldRow & { view_status: HoldViewStatus }>`
    WITH ${wallet} marker AS (
      SELECT coalesce(max(id), 0) AS id FROM ledger_entries WHERE user_id = ${placement.userId}),
    h AS (
      INSERT INTO holds (id, user_id, reference, amount, reason, expires_at, ledger_marker, priced)
      SELECT ${id}, ${placement.userId}, ${placement.reference}, ${placement.amount}, ${placement.reason},
             now() + ${sqlMilliseconds(placement.expiresInSeconds * 1000)}, marker.id, ${placement.priced ?? false}
        FROM marker
      RETURNING *),
    lots AS (
      INSERT INTO hold_lots (hold_id, lot_id, position, amount)
      SELECT h.id, r.lot_id, r.position - 1, r.amount
        FROM h, unnest(${lotIds}::bigint[], ${amounts}::bigint[]) WITH ORDINALITY AS r (lot_id, amount, position))
    ${placement.alongside ? sql`, alongside AS (${placement.alongside(id, funds.available - placement.amount)})` : sql``}
    SELECT ${holdViewColumns} FROM h`.execute(trx);
  const row = inserted.rows[0];
  if (!row) throw new Error(`hold ${id} was not inserted`);
  if (placement.amount === 0) markWalletEnsured(uow, placement.userId);
  // guard: hold-triggers-auto-topup
  await triggerAutoTopup(uow, placement.userId, funds.autoTopup, funds.available - placement.amount);
  return { kind: 'placed', hold: toHoldView(row), available: funds.available - placement.amount };
}
