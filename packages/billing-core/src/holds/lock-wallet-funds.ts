import { sqlAnyOf, sqlBatchArray } from '@tally/platform/db';
import { type RawBuilder, sql } from 'kysely';
import { type AutoTopupTrigger, autoTopupThresholdSql, autoTopupTriggerOf } from '../auto-topup/trigger-auto-topup';
import { meterMap } from '../catalog/meter-map';
import type { HoldRow } from '../db/schema';
import type { UserSql } from '../db/user-sql';
import type { FeatureUse } from '../feature-uses/feature-use';
import { activeHold, fundsOf, readWalletFunds, type WalletFunds } from '../ledger/held-tokens';
import { type DrawableLot, drawableLotsJsonSql, drawableLotsOfJson, type LotDraw } from '../ledger/lots';
import { takeFreedVoidedTokens } from '../ledger/voided-lots';
import { recoverShortfallsFromHold } from '../refunds/take-back-shortfalls';
import { type SpendRead, type SpendReadRow, spendReadOf, spendReadSql } from '../spend-limits/spend-limits';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { giveBackHoldUses } from './give-back-hold-uses';

/** A hold as its operation reads it under the wallet lock, with `expired` by the database clock. */
export type LockedHold = HoldRow & {
  expired: boolean;
  /** What it reserves of each lot, in its draw order (hold_lots by position): what its capture draws. */
  reserved: LotDraw[];
  /**
   * Whether a lot it reserves is voided: only then can what it frees be taken at once
   * (takeFreedVoidedTokens). Read under the wallet lock, which a void takes too.
   */
  lotsVoided: boolean;
  /** A hold by estimate's use (feature_uses, source `hold`), read with it; undefined for an amount hold. */
  use: HoldUse | undefined;
};

/** A hold by estimate's use as its operations read it: what it priced, at which prices, and whether it is free. */
export type HoldUse = Pick<FeatureUse, 'feature' | 'variant' | 'quantities' | 'prices' | 'per' | 'cost' | 'freeTier'>;

export interface LockedFunds extends WalletFunds {
  /** Whether the user has a take-back shortfall still open (what a hold frees may settle it). */
  shortfallsOpen: boolean;
  /** The hold asked for (by id or by reference), when it exists for this user. */
  hold: LockedHold | undefined;
}

/** The funds a spend locked (lockWalletForSpend): with what the spend limits and auto top-up need. */
export interface LockedSpendFunds extends LockedFunds {
  spend: SpendRead;
  /** The user's auto top-up threshold when it is on with a saved card (triggerAutoTopup), else null. */
  autoTopup: AutoTopupTrigger | null;
  /**
   * For a hold placed (a spend about a hold reference): the lots a new hold may reserve, in the
   * draw order (listDrawableLots' query, read in the same statement). Undefined when not read, or
   * when settling lapsed holds may have moved lots since (the placement reads them again then).
   */
  drawable?: DrawableLot[] | undefined;
}

/**
 * Locks the user's wallet row (FOR UPDATE: every writer of holds and lots takes it first, so
 * concurrent holds, captures and spends of one wallet serialize), then reads in ONE more
 * statement (after the lock is granted, so it sees what the lock's previous holder committed)
 * what active holds reserve, whether holds lapsed unsettled, whether a shortfall is open, and the
 * hold the operation is about; settles lapsed holds (settleLapsedHolds) if any; answers the funds
 * as they are now. Every hold operation, app debit and studio debit starts with it (a new spend
 * through lockWalletForSpend).
 */
export function lockWalletFunds(
  uow: UnitOfWork,
  userId: string,
  about: { holdId: string } | { holdReference: string } | null = null,
): Promise<LockedFunds> {
  return lockAndRead(uow, userId, about, false);
}

/**
 * lockWalletFunds for a new spend (a debit, a usage, a hold placed, a studio debit): the same
 * statement also reads what the spend limits decide on (spendReadSql: the user's own limits and
 * what they spent today and this month), so a limit costs no statement of its own. The counters
 * it reads are written by the posting statements of spends, under this same lock. It reads the
 * user's auto top-up threshold too (autoTopupThresholdSql), for the trigger after the spend.
 */
export async function lockWalletForSpend(
  uow: UnitOfWork,
  userId: string,
  about: { holdReference: string } | null = null,
): Promise<LockedSpendFunds> {
  const { spend, autoTopup, ...funds } = await lockAndRead(uow, userId, about, true);
  if (!spend) throw new Error(`the spend of ${userId} was not read`);
  return { ...funds, spend, autoTopup: autoTopup ?? null };
}

async function lockAndRead(
  uow: UnitOfWork,
  userId: string,
  about: { holdId: string } | { holdReference: string } | null,
  spending: boolean,
): Promise<LockedFunds & { spend?: SpendRead; autoTopup?: AutoTopupTrigger | null; drawable?: DrawableLot[] }> {
  const { trx } = uow;
  // The unit holds the lock already (its earlier spend of the user took it): the read is the only statement.
  // guard: wallet-lock-taken-unless-held
  const held = uow.walletsLocked.has(userId);
  const wallet = held ? undefined : await lockWallet(uow, userId);
  const holdId = about !== null && 'holdId' in about ? about.holdId : null;
  const holdReference = about !== null && 'holdReference' in about ? about.holdReference : null;
  // A hold placed reads the lots it may reserve in this statement too.
  const placing = spending && holdReference !== null;
  const read = await sql<FundsReadRow>`
    SELECT ${held ? sql`(SELECT w.balance FROM wallets w WHERE w.user_id = ${userId}) AS balance,` : sql``}
           ${fundsReadColumns(userId, { spending, placing })}
           ${about === null ? sql`NULL` : sql`(${lockedHoldSql(userId, holdId, holdReference)})`} AS hold`.execute(trx);
  const row = read.rows[0];
  if (!row) throw new Error(`the funds of ${userId} cannot be read`);
  return lockedRowOf(uow, userId, Number((wallet ?? row).balance ?? 0), row);
}

/** The user's wallet row locked (FOR UPDATE) and its balance; the unit records the lock it holds (walletsLocked). */
async function lockWallet(uow: UnitOfWork, userId: string): Promise<{ balance: number | string | null }> {
  const { trx } = uow;
  // guard: hold-wallet-lock
  const wallet = await sql<{ balance: number }>`
    SELECT balance FROM wallets WHERE user_id = ${userId} FOR UPDATE`.execute(trx);
  const row = wallet.rows[0];
  if (row === undefined) return { balance: null };
  uow.walletsLocked.add(userId);
  return row;
}

/**
 * The funds of a user as the read after the wallet lock answered them (fundsReadColumns and the
 * hold asked for): lapsed holds settled first (lockedFundsOf); the lots a placement may reserve
 * kept only when nothing was settled (settling may take or recover tokens from lots).
 */
async function lockedRowOf(
  uow: UnitOfWork,
  userId: string,
  balance: number,
  row: FundsReadRow,
): Promise<LockedFunds & { spend?: SpendRead; autoTopup?: AutoTopupTrigger | null; drawable?: DrawableLot[] }> {
  const funds = await lockedFundsOf(uow, userId, balance, row);
  const hold = row.hold === null || row.hold === undefined ? undefined : lockedHoldOfJson(row.hold);
  const spend = row.spend
    ? { spend: spendReadOf(row.spend), autoTopup: autoTopupTriggerOf(row.auto_topup_threshold) }
    : {};
  const drawable = row.drawable && !row.lapsed ? { drawable: drawableLotsOfJson(row.drawable) } : {};
  return { ...funds, hold, ...spend, ...drawable };
}

/**
 * The hold an operation is about, as a scalar sub-select of its row as JSON (or NULL): by id (a
 * capture, a release) or by the user's reference (a placement), with `expired` by the database
 * clock, what it reserves of each lot in its draw order (`reserved`, what a capture draws) and
 * whether a lot it reserves is voided (`lots_voided`). `user`, `holdId` and `holdReference` are
 * values or a batch's columns (lockWalletsForHolds); the one not asked for is NULL.
 */
function lockedHoldSql(user: UserSql, holdId: UserSql | null, holdReference: UserSql | null) {
  // By id, or by the id under the user's reference (the unique (user_id, reference)): one probe
  // of the primary key either way, and the hold's columns written once.
  const id = sql`coalesce(${holdId}, (SELECT byref.id FROM holds byref WHERE byref.user_id = ${user} AND byref.reference = ${holdReference}))`;
  // A hold by estimate's use comes with it (one probe of feature_uses' unique (source, reference)).
  // guard: hold-lots-voided-read
  return sql`
    SELECT row_to_json(x) FROM (
      SELECT h.*, (h.status = 'held' AND h.expires_at <= now()) AS expired,
             CASE WHEN h.priced THEN (
               SELECT row_to_json(u) FROM (
                 SELECT fu.feature, fu.variant, fu.quantities, fu.prices, fu.per, fu.cost, fu.free_tier AS "freeTier"
                   FROM feature_uses fu WHERE fu.source = 'hold' AND fu.reference = h.id) AS u) END AS use,
             coalesce((SELECT json_agg(json_build_object('lotId', hl.lot_id, 'amount', hl.amount) ORDER BY hl.position)
                         FROM hold_lots hl WHERE hl.hold_id = h.id), '[]'::json) AS reserved,
             EXISTS (SELECT 1 FROM hold_lots hl JOIN credit_lots l ON l.id = hl.lot_id
                      WHERE hl.hold_id = h.id AND l.voided_at IS NOT NULL) AS lots_voided
        FROM holds h WHERE h.id = ${id} AND h.user_id = ${user}) AS x`;
}

/** A hold read as JSON (lockedHoldSql): its bigint columns as numbers and its times as Dates, as the pool parses them. */
function lockedHoldOfJson(json: LockedHoldJson): LockedHold {
  const { lots_voided: lotsVoided, reserved, use, ...row } = json;
  const time = (value: unknown) => new Date(value as string);
  const number = (value: unknown) => (value === null ? null : Number(value));
  return {
    ...row,
    amount: Number(row.amount),
    captured: number(row.captured),
    released: number(row.released),
    ledger_marker: Number(row.ledger_marker),
    answer_balance: number(row.answer_balance),
    answer_available: number(row.answer_available),
    excess: number(row.excess),
    debt: number(row.debt),
    expires_at: time(row.expires_at),
    created_at: time(row.created_at),
    settled_at: row.settled_at === null ? null : time(row.settled_at),
    reserved: reserved.map((lot) => ({ lotId: Number(lot.lotId), amount: Number(lot.amount) })),
    lotsVoided,
    use: use === null || use === undefined ? undefined : holdUseOfJson(use),
  } as LockedHold;
}

function holdUseOfJson(use: HoldUseJson): HoldUse {
  return {
    ...use,
    quantities: meterMap(use.quantities),
    prices: meterMap(use.prices),
    per: Number(use.per),
    cost: Number(use.cost),
  };
}

type HoldUseJson = Omit<HoldUse, 'quantities' | 'prices'> & { quantities: unknown; prices: unknown };
type LockedHoldJson = HoldRow & {
  expired: boolean;
  reserved: LotDraw[];
  lots_voided: boolean;
  use?: HoldUseJson | null;
};

/** What the read after the wallet lock answers of a user (fundsReadColumns, and the hold asked for). */
interface FundsReadRow {
  /** The balance, read here only when the unit held the wallet's lock already (walletsLocked). */
  balance?: number | string | null;
  held: number;
  lapsed: boolean;
  shortfalls_open: boolean;
  spend?: SpendReadRow;
  auto_topup_threshold?: number | string | null;
  /** A placement's drawable lots (drawableLotsJsonSql). */
  drawable?: unknown;
  hold?: LockedHoldJson | null;
}

/**
 * The read after the wallet lock, as select-list columns (each followed by a comma) of the user
 * `user` (a parameter, or a batch's column: lockWalletsForSpend): what active holds reserve,
 * whether holds lapsed unsettled, whether a shortfall is open, and for a spend what the spend
 * limits decide on (spendReadSql) and the auto top-up threshold (autoTopupThresholdSql); for a
 * hold placed (`placing`: a column of a batch's rows, or a constant) also the lots it may reserve
 * (drawableLotsJsonSql, listDrawableLots' query), so a placement reads them in no statement of its own.
 */
function fundsReadColumns(
  user: UserSql,
  options: { spending: boolean | RawBuilder<boolean>; placing: boolean | RawBuilder<boolean> },
) {
  const { spending, placing } = options;
  const when = (condition: boolean | RawBuilder<boolean>, value: RawBuilder<unknown>, name: string) =>
    condition === false
      ? sql``
      : condition === true
        ? sql`(${value}) AS ${sql.raw(name)},`
        : sql`CASE WHEN ${condition} THEN (${value}) END AS ${sql.raw(name)},`;
  // guard: hold-shortfalls-open
  return sql`(SELECT coalesce(sum(a.amount), 0) FROM holds a WHERE a.user_id = ${user} AND ${activeHold('a')})::bigint AS held,
           EXISTS (SELECT 1 FROM holds l
                    WHERE l.user_id = ${user} AND l.status = 'held' AND l.settled_at IS NULL
                      AND l.expires_at <= now()) AS lapsed,
           EXISTS (SELECT 1 FROM take_back_shortfalls s
                    WHERE s.user_id = ${user} AND s.closed_at IS NULL AND s.recovered + s.forgiven < s.shortfall) AS shortfalls_open,
           ${when(spending, sql`SELECT row_to_json(sp) FROM (${spendReadSql(user)}) AS sp`, 'spend')}
           ${when(spending, autoTopupThresholdSql(user), 'auto_topup_threshold')}
           ${when(placing, drawableLotsJsonSql(user), 'drawable')}`;
}

/** The funds as locked and read; lapsed holds settled first (settleLapsedHolds), which may move them. */
async function lockedFundsOf(
  uow: UnitOfWork,
  userId: string,
  balance: number,
  read: Pick<FundsReadRow, 'held' | 'lapsed' | 'shortfalls_open'>,
): Promise<WalletFunds & { shortfallsOpen: boolean }> {
  const shortfallsOpen = read.shortfalls_open;
  if (!read.lapsed) return { ...fundsOf(balance, Number(read.held)), shortfallsOpen };
  // A lapsed hold already stopped counting; only a recovery it made moves the funds.
  await settleLapsedHolds(uow, userId);
  return { ...(await readWalletFunds(uow.trx, userId, { lock: false })), shortfallsOpen };
}

/**
 * A spend's fence as lockWalletsForSpend reads it: given the spend's reference (a column of the
 * batch's rows), a scalar sub-select of the row already under it as JSON (row_to_json), or NULL.
 */
export type SpendFenceSql = (reference: RawBuilder<string>) => RawBuilder<unknown>;

/**
 * lockWalletForSpend for several spends of distinct users in one transaction (a batch of debits,
 * debitTokensTogether, or of usage, recordUsagesTogether): the wallets locked in user order in ONE
 * statement (as the posting statement of several postings locks them, so the two never wait on
 * each other in a cycle), then ONE read of every user's funds (fundsReadColumns, after the locks
 * are granted) and of the row already under each spend's reference (`fence`: the ledger entry of
 * a debit, the use of a usage; read under its wallet lock as a single spend reads it), as JSON.
 * Answers by position. The read's arrays are sqlBatchArray's, as lockWalletsForHolds' are: it is
 * planned once per connection, not at every batch.
 */
export async function lockWalletsForSpend<Previous>(
  uow: UnitOfWork,
  spends: readonly { userId: string; reference: string }[],
  fence: SpendFenceSql,
): Promise<{ funds: LockedSpendFunds; previous: Previous | undefined }[]> {
  const userIds = spends.map((spend) => spend.userId);
  // The unit holds every lock already (their users' earlier spends took them): the read is the only statement.
  // guard: wallet-locks-taken-unless-held
  const held = userIds.every((userId) => uow.walletsLocked.has(userId));
  const balances = held ? undefined : await lockWalletsInOrder(uow, userIds);
  const read = await sql<FundsReadRow & { position: number; previous: Previous | null }>`
    SELECT (r.position - 1)::int AS position,
           ${held ? sql`(SELECT w.balance FROM wallets w WHERE w.user_id = r.user_id) AS balance,` : sql``}
           ${fundsReadColumns(sql.ref('r.user_id'), { spending: true, placing: false })}
           (${fence(sql.ref('r.reference'))}) AS previous
      FROM unnest(${sqlBatchArray(userIds, 'text')}, ${sqlBatchArray(
        spends.map((spend) => spend.reference),
        'text',
      )})
           WITH ORDINALITY AS r (user_id, reference, position)`.execute(uow.trx);
  const answers = new Array<{ funds: LockedSpendFunds; previous: Previous | undefined }>(spends.length);
  for (const row of read.rows) {
    const { userId } = spends[row.position] as { userId: string };
    const balance = balances ? (balances.get(userId) ?? 0) : Number(row.balance ?? 0);
    const funds = await lockedFundsOf(uow, userId, balance, row);
    if (!row.spend) throw new Error(`the spend of ${userId} was not read`);
    answers[row.position] = {
      funds: {
        ...funds,
        hold: undefined,
        spend: spendReadOf(row.spend),
        autoTopup: autoTopupTriggerOf(row.auto_topup_threshold),
      },
      previous: row.previous === null ? undefined : row.previous,
    };
  }
  return answers;
}

/**
 * The wallets of `userIds` locked in user order in ONE statement (FOR UPDATE, as the posting
 * statement of several postings locks them, so the two never wait on each other in a cycle):
 * their balances by user (a user without a wallet has none).
 */
async function lockWalletsInOrder(uow: UnitOfWork, userIds: readonly string[]): Promise<Map<string, number>> {
  const { trx } = uow;
  // guard: batch-wallet-locks
  const wallets = await sql<{ user_id: string; balance: number }>`
    SELECT user_id, balance FROM wallets
     WHERE user_id = ${sqlAnyOf(userIds, 'text')} ORDER BY user_id FOR UPDATE`.execute(trx);
  // guard: wallet-locks-recorded
  for (const row of wallets.rows) uow.walletsLocked.add(row.user_id);
  return new Map(wallets.rows.map((row) => [row.user_id, Number(row.balance)]));
}

/** What a hold operation is about: a capture (or release) its hold by id, a placement by its reference. */
export type HoldAbout = { holdId: string } | { holdReference: string };

/**
 * The funds of one hold operation of a batch (lockWalletsForHolds): a placement's are a spend's
 * (`spend`, `autoTopup`, `drawable`), a capture's are lockWalletFunds'.
 */
export type LockedHoldFunds = LockedFunds & Partial<Pick<LockedSpendFunds, 'spend' | 'autoTopup' | 'drawable'>>;

/**
 * lockWalletFunds (a capture) and lockWalletForSpend (a placement) for several hold operations of
 * distinct users in one transaction (holdOperationsTogether): the wallets locked in user order in
 * ONE statement (lockWalletsInOrder, as lockWalletsForSpend), then ONE read, after the locks are
 * granted, of every user's funds (fundsReadColumns: a placement's with its spend counters, auto
 * top-up threshold and the lots it may reserve), and of the hold each operation is about
 * (lockedHoldSql, as a single operation reads it). Lapsed holds are settled as
 * lockWalletFunds settles them. Answers by position. The batch's arrays are sqlBatchArray's: every
 * part of the read is a look-up per user by index, so its generic plan serves every batch size
 * and it is planned once per connection (about 1 ms a batch otherwise, as long as its execution).
 */
export async function lockWalletsForHolds(
  uow: UnitOfWork,
  operations: readonly { userId: string; about: HoldAbout }[],
): Promise<LockedHoldFunds[]> {
  const userIds = operations.map((operation) => operation.userId);
  const balances = await lockWalletsInOrder(uow, userIds);
  const holdIds = operations.map(({ about }) => ('holdId' in about ? about.holdId : null));
  const holdReferences = operations.map(({ about }) => ('holdReference' in about ? about.holdReference : null));
  const placing = sql<boolean>`r.hold_reference IS NOT NULL`;
  const read = await sql<FundsReadRow & { position: number }>`
    SELECT (r.position - 1)::int AS position,
           ${fundsReadColumns(sql.ref('r.user_id'), { spending: placing, placing })}
           (${lockedHoldSql(sql.ref('r.user_id'), sql.ref('r.hold_id'), sql.ref('r.hold_reference'))}) AS hold
      FROM unnest(${sqlBatchArray(userIds, 'text')}, ${sqlBatchArray(holdIds, 'text')},
                  ${sqlBatchArray(holdReferences, 'text')})
           WITH ORDINALITY AS r (user_id, hold_id, hold_reference, position)`.execute(uow.trx);
  const answers = new Array<LockedHoldFunds>(operations.length);
  for (const row of read.rows) {
    const { userId } = operations[row.position] as { userId: string };
    answers[row.position] = await lockedRowOf(uow, userId, balances.get(userId) ?? 0, row);
  }
  return answers;
}

/**
 * Ends the user's holds that passed expires_at and are not settled yet (docs/holds.md): they
 * stopped counting at expires_at already (the active-hold predicate), with no ledger row; this
 * only marks them settled (out of the open-holds index), takes what each frees on a voided lot
 * (takeFreedVoidedTokens) and lets the rest settle a take-back shortfall recorded while it was active (recoverShortfallsFromHold), oldest hold
 * first. Needs the wallet lock. Lazy: run by the next operation that locks the wallet here, and
 * by the expiry sweeper for wallets nobody touches. Returns the holds settled.
 */
export async function settleLapsedHolds(uow: UnitOfWork, userId: string): Promise<number> {
  const lapsed = await sql<{ id: string; amount: number; ledger_marker: number; expires_at: Date; priced: boolean }>`
    UPDATE holds SET settled_at = now()
     WHERE user_id = ${userId} AND status = 'held' AND settled_at IS NULL AND expires_at <= now()
    RETURNING id, amount, ledger_marker, expires_at, priced`.execute(uow.trx);
  // A lapsed hold by estimate gives its use back, as a released one does.
  await giveBackHoldUses(
    uow,
    lapsed.rows.filter((hold) => hold.priced).map((hold) => hold.id),
  );
  const holds = [...lapsed.rows].sort((a, b) => Number(a.ledger_marker) - Number(b.ledger_marker));
  for (const hold of holds) {
    // What it frees on a voided lot is taken at once (docs/lots.md "Voids"); only the rest is the user's.
    // guard: lapsed-hold-takes-voided
    const voided = await takeFreedVoidedTokens(uow, userId, { holdId: hold.id });
    await recoverShortfallsFromHold(uow, {
      userId,
      holdId: hold.id,
      ledgerMarker: Number(hold.ledger_marker),
      expiresAt: new Date(hold.expires_at),
      // guard: lapsed-hold-frees-shortfall
      freedTokens: Number(hold.amount) - voided.taken,
    });
  }
  return holds.length;
}
