import { randomBytes } from 'node:crypto';
import { type SqlBatchArrayType, sqlBatchArray, sqlMillisecondsOf } from '@tally/platform/db';
import { type RawBuilder, sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import type { HoldRow } from '../db/schema';
import { type FeatureUse, insertFeatureUsesSql, type KeptFeatureUse } from '../feature-uses/feature-use';
import { ensureWalletCtes, markWalletEnsured } from '../ledger/ensure-wallet';
import { allocateDraws, type LotDraw, listDrawableLots } from '../ledger/lots';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { type HoldView, type HoldViewStatus, holdViewColumns, toHoldView } from './list-holds';
import { type LockedFunds, type LockedSpendFunds, lockWalletForSpend } from './lock-wallet-funds';

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

/**
 * A new hold's public id: `hold_` + 24 hex characters, the first 12 the milliseconds since the
 * epoch and the other 12 random (48 bits a millisecond). Ids in time order put new holds at the
 * end of the primary key's index, not on a random page of it: each page a placement or a capture
 * touches there is one an earlier hold touched, not one more written whole to the WAL after a
 * checkpoint (bench/README.md "Hold + capture cost").
 */
export function newHoldId(now: number = Date.now()): string {
  // guard: hold-id-time-ordered
  return `hold_${now.toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;
}

/**
 * Places a hold (docs/holds.md): reserves `amount` tokens from the unheld part of lots that have
 * not expired, in the draw order (hold_lots), in the caller's unit of work. The wallet row is
 * locked first (lockWalletFunds), so concurrent placements on one wallet serialize and each sees
 * what the ones before it reserved: ten concurrent holds of 30 on 100 give exactly three. The
 * reference is the placement's fence: under the lock, a second placement with it finds the first
 * (the unique (user_id, reference) backs it). No ledger row: a hold moves no money until captured.
 * The read after the lock brings the hold under the reference and the lots it may reserve, so a
 * new hold is the lock, that read and one insert.
 */
export async function placeHold(uow: UnitOfWork, placement: HoldPlacement): Promise<PlaceHoldResult> {
  const funds = await lockWalletForSpend(uow, placement.userId, { holdReference: placement.reference });
  return placementFence(placement, funds) ?? reserveHold(uow, funds, placement);
}

/**
 * The placement's fence under the wallet lock (one definition for a placement alone and in a
 * batch: holdOperationsTogether): the hold already under its reference answers (the same amount: that
 * hold, in whatever state it is now; another: a conflict); null when there is none.
 */
export function placementFence(
  placement: Pick<HoldPlacement, 'reference' | 'amount'>,
  funds: Pick<LockedFunds, 'hold' | 'available'>,
): PlaceHoldResult | null {
  const existing = funds.hold;
  // guard: hold-reference-fence
  if (!existing) return null;
  if (Number(existing.amount) !== placement.amount) {
    return { kind: 'conflict', message: `reference ${placement.reference} already holds another amount` };
  }
  return {
    kind: 'existing',
    hold: toHoldView({ ...existing, view_status: existing.expired ? 'expired' : existing.status }),
    available: funds.available,
  };
}

type ReservingFunds = Pick<LockedSpendFunds, 'balance' | 'held' | 'available' | 'spend' | 'autoTopup' | 'drawable'>;

/** A new hold as reserveHold inserts it: by amount, or by estimate (`use`: a `priced` hold, its use kept with it). */
export type Reservation = HoldPlacement & {
  /** A hold by estimate's use, kept in the statement that inserts its hold (source `hold`, reference the hold's id). */
  use?: FeatureUse | undefined;
};

/**
 * Reserves a new hold under the wallet lock the caller took (`funds` as lockWalletForSpend read
 * them, no hold under the reference): placeHold's second half, and a priced hold's
 * (placePricedHold; with its `use`, whose amount may be 0: a free use reserves the use, no tokens).
 * What it reserves counts against the spend limits as spent while the hold is active: past a
 * limit (spendLimitRefusal) it reserves nothing.
 */
export async function reserveHold(
  uow: UnitOfWork,
  funds: ReservingFunds,
  placement: Reservation,
): Promise<PlaceHoldResult> {
  const decided = await decideReservation(uow, funds, placement);
  if ('result' in decided) return decided.result;
  const id = newHoldId();
  // A hold of 0 (a free use, an estimate that costs nothing) can be a new user's first act: the
  // statement then creates the user and wallet the hold's row references (a hold of tokens has them).
  // guard: zero-hold-creates-wallet
  const wallet = placement.amount === 0 ? sql`${ensureWalletCtes(placement.userId)},` : sql``;
  const [row] = await insertHolds(uow, [{ id, placement, draws: decided.draws, funds }], { wallet });
  if (placement.amount === 0) markWalletEnsured(uow, placement.userId);
  return placed(uow, funds, placement, row as HoldRow & { view_status: HoldViewStatus });
}

/**
 * reserveHold for several placements of distinct users under the wallet locks the caller took
 * (holdOperationsTogether: `funds` as lockWalletsForHolds read them), by amount or by estimate,
 * each decided as reserveHold decides it (decideReservation), the new holds, their lots and the
 * uses of those by estimate in ONE insert. A hold of 0 (its user may have no wallet yet) goes
 * through reserveHold under the same lock. Answers by position.
 */
export async function reserveHolds(
  uow: UnitOfWork,
  items: readonly { funds: ReservingFunds; placement: Reservation }[],
): Promise<PlaceHoldResult[]> {
  const results = new Array<PlaceHoldResult>(items.length);
  const toInsert: { index: number; id: string; draws: LotDraw[] }[] = [];
  for (const [index, { funds, placement }] of items.entries()) {
    if (placement.amount === 0) {
      results[index] = await reserveHold(uow, funds, placement);
      continue;
    }
    const decided = await decideReservation(uow, funds, placement);
    if ('result' in decided) results[index] = decided.result;
    else toInsert.push({ index, id: newHoldId(), draws: decided.draws });
  }
  const rows = await insertHolds(
    uow,
    toInsert.map(({ index, id, draws }) => ({ id, draws, ...(items[index] as (typeof items)[number]) })),
  );
  for (const [position, { index }] of toInsert.entries()) {
    const { funds, placement } = items[index] as (typeof items)[number];
    results[index] = await placed(uow, funds, placement, rows[position] as HoldRow & { view_status: HoldViewStatus });
  }
  return results;
}

/**
 * A reservation's rules under the wallet lock (one definition for a hold alone, in a batch, and
 * by estimate): the spend limits, then `available`, then the lots it may reserve in the draw order
 * (read with the funds when the read brought them, else now): the draws, or the answer refusing it.
 */
async function decideReservation(
  uow: UnitOfWork,
  funds: ReservingFunds,
  placement: Reservation,
): Promise<{ draws: LotDraw[] } | { result: PlaceHoldResult }> {
  const insufficient = { kind: 'insufficient', requested: placement.amount } as const;
  const refusal = spendLimitRefusal(funds.spend, placement.spendLimits, funds.held, placement.amount);
  // guard: hold-spend-limit
  if (refusal) return { result: { kind: 'spend-limit', refusal } };
  if (funds.available < placement.amount)
    return { result: { ...insufficient, available: Math.max(0, funds.available) } };
  if (placement.amount === 0) return { draws: [] };
  // Unlocked as the read's (drawableLotsJsonSql): under the wallet lock no other writer moves them.
  const lots = funds.drawable ?? (await listDrawableLots(uow.trx, placement.userId, { spend: true, lock: false }));
  const { draws, left } = allocateDraws(lots, placement.amount);
  // Available counts tokens of an expired lot the sweeper has not taken yet; they cannot be held.
  if (left > 0) return { result: { ...insufficient, available: placement.amount - left } };
  return { draws };
}

/**
 * New holds, their markers (the user's latest ledger entry), their lots and the uses of those by
 * estimate (with the answer's balance and available) in ONE statement, one row of it per hold, in
 * order. `wallet`: CTEs of a single hold's statement (a hold of 0's user and wallet).
 */
async function insertHolds(
  uow: UnitOfWork,
  holds: readonly { id: string; placement: Reservation; draws: readonly LotDraw[]; funds: ReservingFunds }[],
  extra: { wallet?: RawBuilder<unknown> } = {},
): Promise<(HoldRow & { view_status: HoldViewStatus })[]> {
  if (holds.length === 0) return [];
  const column = (type: SqlBatchArrayType, value: (hold: (typeof holds)[number]) => unknown) =>
    sqlBatchArray(holds.map(value), type);
  const lots = holds.flatMap(({ id, draws }) => draws.map((draw, position) => ({ id, position, ...draw })));
  const lotColumn = (type: SqlBatchArrayType, value: (lot: (typeof lots)[number]) => unknown) =>
    sqlBatchArray(lots.map(value), type);
  const inserted = await sql<HoldRow & { view_status: HoldViewStatus; position: number }>`
    WITH ${extra.wallet ?? sql``} input AS (
      SELECT * FROM unnest(${column('text', (hold) => hold.id)}, ${column('text', (hold) => hold.placement.userId)},
                           ${column('text', (hold) => hold.placement.reference)}, ${column('bigint', (hold) => hold.placement.amount)},
                           ${column('text', (hold) => hold.placement.reason)},
                           ${column('bigint', (hold) => hold.placement.expiresInSeconds * 1000)},
                           ${column('boolean', (hold) => hold.placement.use !== undefined)})
             WITH ORDINALITY AS i (id, user_id, reference, amount, reason, lives_ms, priced, position)),
    h AS (
      INSERT INTO holds (id, user_id, reference, amount, reason, expires_at, ledger_marker, priced)
      SELECT i.id, i.user_id, i.reference, i.amount, i.reason, now() + ${sqlMillisecondsOf(sql.ref('i.lives_ms'))},
             (SELECT coalesce(max(e.id), 0) FROM ledger_entries e WHERE e.user_id = i.user_id), i.priced
        FROM input i ORDER BY i.position
      RETURNING *),
    lots AS (
      INSERT INTO hold_lots (hold_id, lot_id, position, amount)
      SELECT h.id, r.lot_id, r.position, r.amount
        FROM h JOIN unnest(${lotColumn('text', (lot) => lot.id)}, ${lotColumn('bigint', (lot) => lot.lotId)},
                           ${lotColumn('int', (lot) => lot.position)}, ${lotColumn('bigint', (lot) => lot.amount)})
                    AS r (hold_id, lot_id, position, amount) ON r.hold_id = h.id)
    ${usesInsertSql(holds)}
    SELECT ${holdViewColumns}, i.position::int FROM h JOIN input i ON i.id = h.id ORDER BY i.position`.execute(uow.trx);
  if (inserted.rows.length !== holds.length)
    throw new Error(`${holds.length - inserted.rows.length} hold(s) were not inserted`);
  return inserted.rows;
}

/**
 * The uses of the holds by estimate among `holds`, as a CTE of insertHolds' statement (none when
 * all are amount holds): each with the answer its hold gives (the balance, and available after it).
 */
function usesInsertSql(
  holds: readonly { id: string; placement: Reservation; funds: Pick<ReservingFunds, 'balance' | 'available'> }[],
) {
  const uses = holds.flatMap(({ id, placement, funds }): KeptFeatureUse[] =>
    placement.use === undefined
      ? []
      : [
          {
            source: 'hold',
            userId: placement.userId,
            reference: id,
            use: placement.use,
            ledgerReference: null,
            answer: { balance: funds.balance, available: funds.available - placement.amount },
          },
        ],
  );
  return uses.length === 0 ? sql`` : sql`, uses AS (${insertFeatureUsesSql(uses)})`;
}

/** A new hold's answer, after its auto top-up trigger. */
async function placed(
  uow: UnitOfWork,
  funds: ReservingFunds,
  placement: HoldPlacement,
  row: HoldRow & { view_status: HoldViewStatus },
): Promise<PlaceHoldResult> {
  // guard: hold-triggers-auto-topup
  await triggerAutoTopup(uow, placement.userId, funds.autoTopup, funds.available - placement.amount);
  return { kind: 'placed', hold: toHoldView(row), available: funds.available - placement.amount };
}
