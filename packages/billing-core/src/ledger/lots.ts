import { sqlAnyOf } from '@tally/platform/db';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB, LedgerEntryRow, LotCategory } from '../db/schema';
import { InsufficientBalanceError } from '../errors';
import { heldByLotOfUsers } from './held-tokens';

/**
 * When a credit's lot expires: a time, never (null), or a whole number of months after a time
 * (or after the database's now()), counted by the database (`+ make_interval(months => n)`, so a
 * month after Jan 31 is the end of February, as the installments' due dates are counted).
 */
export type LotExpiry = Date | null | { months: number; after: Date | 'now' };

/**
 * What a ledger entry does to the wallet's lots, one kind per posting (docs/lots.md: `credit`,
 * `spend`, `take-back`, `give-back`, `expire`): a credit without its lot does not compile. A
 * credit's `rolloverMax` (default 0) is what of its unspent tokens the sweeper carries into a new
 * lot when it expires (subscription lots only).
 */
export type LotMovement =
  | { kind: 'credit'; category: LotCategory; expiresAt: LotExpiry; rolloverMax?: number }
  /**
   * A spend in the draw order. `alongside`: a statement of the spend's own (a usage's use,
   * recordUsage) written in the same round trip as its draws (takeDraws), so in the same
   * transaction only if the entry posts; it refuses the spend by failing.
   */
  | { kind: 'spend'; alongside?: RawBuilder<unknown> }
  | { kind: 'expire'; lotId: number }
  /** A void's take (docs/lots.md "Voids"): exactly from the one voided lot, what of it no hold reserves. */
  | { kind: 'void'; lotId: number }
  | { kind: 'take-back'; fromLotOf?: string }
  /**
   * A hold's capture (docs/holds.md): draws exactly from the lots the hold reserved, even one that
   * expired. `reserved`: what it reserves of each lot in its draw order (hold_lots by position),
   * as the capture read it under the wallet lock (lockWalletFunds).
   */
  | { kind: 'capture'; holdId: string; reserved: readonly LotDraw[] }
  | { kind: 'give-back'; of: string };

export function openingLotSource(userId: string): string {
  return `lot:opening:${userId}`;
}

/** Checks a movement against the entry's sign (a credit cannot draw, a debit cannot create). */
export function assertMovementFits(movement: LotMovement, amount: number): void {
  const credit = movement.kind === 'credit' || movement.kind === 'give-back';
  if (movement.kind === 'credit' && !Number.isSafeInteger(movement.rolloverMax ?? 0)) {
    throw new RangeError(`a lot's rolloverMax is a whole number of tokens, got ${movement.rolloverMax}`);
  }
  if (credit !== amount > 0) {
    throw new RangeError(`a ${movement.kind} moves lots the other way than a ledger amount of ${amount}`);
  }
}

/**
 * What postLedgerEntry's statement found and did about the wallet's lots before this entry.
 * `matchBalance`: the lots held exactly the balance the entry started from, so there is no gap to
 * close. The statement reads the lots in its snapshot and the wallet at its latest version (FOR
 * UPDATE); it says they match only when the wallet row is also the snapshot's version (same
 * xmin: nothing changed the balance since the snapshot) and the snapshot's lots sum to it. Lots
 * committed after the snapshot cannot break that: every transaction that writes a wallet's lots
 * commits only with them summing to its balance (credit_lots_sum_trg), which did not move.
 * `creditLotCreated`: a credit's lot is already inserted (only when they matched). Otherwise
 * applyLotMovement re-reads the lots in a statement of its own, as before. `drawsRecorded`: the
 * draws known before the posting (knownDrawsOf: a capture's) already moved their lots and were
 * recorded as the entry's (only when they matched).
 */
export interface LotsBeforeEntry {
  matchBalance: boolean;
  creditLotCreated: boolean;
  drawsRecorded?: boolean;
}

/**
 * The draws of a movement that are known before its posting, from what it moves alone: a
 * capture's (`need` tokens from its hold's lots, in their order: holdDraws); null for any other
 * movement (a spend's depend on the lots as the posting finds them). The posting statement moves
 * and records them itself when the wallet's lots match its balance (LotsBeforeEntry.drawsRecorded).
 */
export function knownDrawsOf(movement: LotMovement, need: number): LotDraw[] | null {
  return movement.kind === 'capture' ? holdDraws(movement, need) : null;
}

/**
 * Applies a posted entry to the wallet's lots, in the entry's transaction, under the wallet's row
 * lock (postLedgerEntry took it). Lots are locked in id order. First it closes any gap between the
 * balance before the entry and the lots (a balance from before lots, or an entry old code posted
 * without lots): a positive gap goes to the opening lot, a negative one is taken in the take-back
 * order without draws; `before` (postLedgerEntry's statement) can say there is none, and that a
 * credit's lot is in already. The deferred trigger credit_lots_sum_trg checks the result at COMMIT.
 */
export async function applyLotMovement(
  trx: Transaction<DB>,
  entry: LedgerEntryRow,
  movement: LotMovement,
  before: LotsBeforeEntry = { matchBalance: false, creditLotCreated: false },
): Promise<LotDraw[] | null> {
  const userId = entry.user_id;
  if (movement.kind === 'credit' && before.creditLotCreated) return null;
  if (!before.matchBalance) await closeLotGap(trx, userId, entry.balance_before);

  switch (movement.kind) {
    case 'credit':
      await createLot(trx, {
        userId,
        category: movement.category,
        source: entry.reference,
        amount: entry.amount,
        expiresAt: movement.expiresAt,
        rolloverMax: movement.rolloverMax ?? 0,
      });
      return null;
    case 'spend':
    case 'take-back':
      return draw(trx, userId, -entry.amount, movement, entry.id);
    case 'capture': {
      const draws = holdDraws(movement, -entry.amount);
      // guard: capture-draws-recorded-once
      if (before.drawsRecorded) return draws;
      await takeDraws(trx, [{ entryId: entry.id, draws }]);
      return draws;
    }
    case 'give-back':
      return giveBack(trx, entry, movement.of);
    case 'expire':
    case 'void': {
      // Exactly from the one lot; the CHECK (remaining >= 0) refuses a take of more than it holds.
      const taken = [{ lotId: movement.lotId, amount: -entry.amount }];
      // guard: expiry-takes-lot
      await takeDraws(trx, [{ entryId: entry.id, draws: taken }]);
      return taken;
    }
  }
}

/** One lot's part of an entry (`ledger_draws`): what a debit took from it, or a give-back returned. */
export interface LotDraw {
  lotId: number;
  amount: number;
}

/**
 * applyLotMovement for several entries of distinct users whose lots matched their balances (the
 * posting statement said so: no gap to close), in fewer statements: the spends' drawable lots in
 * ONE read (locked in (user, id) order, allocated per entry as draw() allocates them), the
 * captures' draws from what their holds reserve (as a capture alone draws them), then ONE
 * statement taking and recording every draw (takeDraws). Throws InsufficientBalanceError as draw() does
 * when a spend's unexpired, unheld lots cannot cover it. The draws by entry id.
 */
export async function drawTogether(
  trx: Transaction<DB>,
  spends: readonly (LedgerEntryRow & { alongside?: RawBuilder<unknown> | undefined })[],
  captures: readonly { entry: LedgerEntryRow; movement: Extract<LotMovement, { kind: 'capture' }> }[] = [],
): Promise<Map<number, LotDraw[]>> {
  if (new Set(spends.map((entry) => entry.user_id)).size !== spends.length) {
    throw new Error('drawTogether takes one spend per user');
  }
  const lotsOf =
    spends.length === 0
      ? new Map<string, DrawableLot[]>()
      : await listSpendableLotsOfUsers(
          trx,
          spends.map((entry) => entry.user_id),
        );
  const drawn: { entryId: number; draws: LotDraw[] }[] = [];
  for (const entry of spends) {
    const need = -entry.amount;
    const { draws, left } = allocateDraws(lotsOf.get(entry.user_id) ?? [], need);
    // Else the lots would not sum to the balance: credit_lots_sum_trg would refuse the commit.
    if (left > 0) throw new InsufficientBalanceError(entry.user_id, need - left, need, need - left);
    drawn.push({ entryId: entry.id, draws });
  }
  for (const { entry, movement } of captures)
    drawn.push({ entryId: entry.id, draws: holdDraws(movement, -entry.amount) });
  await takeDraws(
    trx,
    drawn,
    spends.map((entry) => entry.alongside),
  );
  return new Map(drawn.map((entry) => [entry.entryId, entry.draws]));
}

/**
 * Closes the gap between a wallet's balance (read under its row lock) and its lots: a balance
 * from before lots, or an entry old code posted without lots. A positive gap goes to the opening
 * lot, a negative one is taken in the take-back order without draws. The caller holds the wallet
 * row lock (postLedgerEntry's statement, or the expiry sweeper's claim).
 */
export async function closeLotGap(trx: Transaction<DB>, userId: string, balance: number): Promise<void> {
  // remaining > 0: the draw-order index's lots (an empty lot adds nothing), not the user's whole history.
  const held = await sql<{ total: number }>`
    SELECT coalesce(sum(remaining), 0)::bigint AS total FROM credit_lots
     WHERE user_id = ${userId} AND remaining > 0`.execute(trx);
  const gap = balance - Number(held.rows[0]?.total ?? 0);
  // guard: lots-opening-lot
  // guard: lots-old-debit
  if (gap > 0) {
    await sql`
      INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at)
      VALUES (${userId}, 'purchased', ${openingLotSource(userId)}, ${gap}, ${gap}, NULL)
      ON CONFLICT (source) DO UPDATE
        SET amount = credit_lots.amount + excluded.amount, remaining = credit_lots.remaining + excluded.remaining`.execute(
      trx,
    );
  } else if (gap < 0) {
    await draw(trx, userId, -gap, { kind: 'take-back' }, null);
  }
}

/** Inserts one lot (the ready seam for grants: promotional, any expiry). */
export async function createLot(
  trx: Transaction<DB>,
  lot: {
    userId: string;
    category: LotCategory;
    source: string;
    amount: number;
    expiresAt: LotExpiry;
    rolloverMax?: number;
  },
): Promise<number> {
  const inserted = await sql<{ id: number }>`
    INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at, rollover_max)
    VALUES (${lot.userId}, ${lot.category}, ${lot.source}, ${lot.amount}, ${lot.amount}, ${expiryOf(lot.expiresAt)},
            ${lot.rolloverMax ?? 0})
    RETURNING id`.execute(trx);
  const row = inserted.rows[0];
  if (!row) throw new Error(`lot ${lot.source} was not created`);
  return Number(row.id);
}

function expiryOf(expiry: LotExpiry) {
  if (expiry === null) return sql`NULL::timestamptz`;
  if (expiry instanceof Date) return sql`${expiry}::timestamptz`;
  const base = expiry.after === 'now' ? sql`now()` : sql`${expiry.after}::timestamptz`;
  return sql`(${base} + make_interval(months => ${expiry.months}))`;
}

/** A lot a draw can take from, in the draw order, with what of it no active hold reserves. */
export interface DrawableLot {
  id: number;
  free: number;
}

/**
 * The user's lots a draw can take from, in the order it takes them, each with its unheld part
 * (`remaining` less what active holds reserve): for a `spend` (and a new hold) only lots that
 * have not expired; for a `take-back` also expired ones (after the rest), the lot `preferred`
 * created first. With `lock`, the lots are locked in id order (the caller holds the wallet row).
 * The one query behind spends, take-backs, hold placement and `check`, so they cannot disagree.
 */
export async function listDrawableLots(
  db: Kysely<DB>,
  userId: string,
  options: { spend: boolean; preferred?: string | null; lock: boolean },
): Promise<DrawableLot[]> {
  const lots = await drawableLotsSql(sql`= ${userId}`, options).execute(db);
  return lots.rows.map((lot) => ({ id: Number(lot.id), free: Number(lot.free) }));
}

/**
 * listDrawableLots for a spend of each of several users at once (drawTogether), locked in
 * (user, id) order: the same query, so the two cannot disagree. By user.
 */
async function listSpendableLotsOfUsers(trx: Transaction<DB>, userIds: readonly string[]) {
  const lots = await drawableLotsSql(sql`= ${sqlAnyOf(userIds, 'text')}`, { spend: true, lock: true }).execute(trx);
  const byUser = new Map<string, DrawableLot[]>();
  for (const lot of lots.rows) {
    const list = byUser.get(lot.user_id) ?? [];
    list.push({ id: Number(lot.id), free: Number(lot.free) });
    byUser.set(lot.user_id, list);
  }
  return byUser;
}

/** The drawable lots of the users `userIs` matches (`= $1`, `IN (…)`), each user's in draw order. */
function drawableLotsSql(
  userIs: RawBuilder<unknown>,
  options: { spend: boolean; preferred?: string | null; lock: boolean },
) {
  const preferred = options.preferred ?? null;
  const lock = options.lock ? sql`FOR UPDATE` : sql``;
  // guard: lots-spend-skips-expired
  // guard: lots-draw-order
  // guard: lots-take-back-payment-first
  // guard: lots-draw-excludes-held
  return sql<DrawableLot & { user_id: string }>`
    WITH locked AS MATERIALIZED (
      SELECT id, user_id, amount, remaining, expires_at, draw_rank, source,
             (expires_at IS NOT NULL AND expires_at <= now()) AS expired
        FROM credit_lots
       WHERE user_id ${userIs} AND remaining > 0
       ORDER BY user_id, id
         ${lock}),
    held AS (${heldByLotOfUsers(userIs)})
    SELECT l.user_id, l.id, l.remaining - coalesce(h.held, 0) AS free,
           row_number() OVER (
             ORDER BY l.user_id, (l.source = ${preferred}) IS TRUE DESC, l.expired, l.expires_at NULLS LAST, l.draw_rank, l.id
           ) AS draw_position
      FROM locked l LEFT JOIN held h ON h.lot_id = l.id
     WHERE NOT (${options.spend} AND l.expired) AND l.remaining > coalesce(h.held, 0)
     ORDER BY draw_position`;
}

/**
 * listDrawableLots for a spend of `user` (a parameter, or a batch's column) as a scalar sub-select
 * of a JSON array in the draw order (the same query), for a statement that reads them beside other
 * things: a hold placement's read after the wallet lock (lockWalletFunds). Unlocked: a hold writes
 * no lot, and under the wallet lock, which every writer of a wallet's lots takes first, they cannot
 * change (a row lock on each would cost a write per lot). Read back with drawableLotsOfJson.
 */
export function drawableLotsJsonSql(user: string | RawBuilder<string>): RawBuilder<unknown> {
  return sql`
    SELECT coalesce(json_agg(json_build_object('id', d.id, 'free', d.free) ORDER BY d.draw_position), '[]'::json)
      FROM (${drawableLotsSql(sql`= ${user}`, { spend: true, lock: false })}) AS d`;
}

export function drawableLotsOfJson(json: unknown): DrawableLot[] {
  return (json as { id: number | string; free: number | string }[]).map((lot) => ({
    id: Number(lot.id),
    free: Number(lot.free),
  }));
}

/** Takes up to `need` from the lots in their order: the draws, and what is left untaken. */
export function allocateDraws(
  lots: DrawableLot[],
  need: number,
): { draws: { lotId: number; amount: number }[]; left: number } {
  const draws: { lotId: number; amount: number }[] = [];
  let left = need;
  for (const lot of lots) {
    if (left === 0) break;
    const take = Math.min(left, lot.free);
    if (take <= 0) continue;
    draws.push({ lotId: lot.id, amount: take });
    left -= take;
  }
  return { draws, left };
}

/**
 * Takes `need` tokens from the user's lots (locked in id order, then ordered for drawing; never
 * what active holds reserve) and records them as the entry's draws (none for a gap without an entry).
 */
async function draw(
  trx: Transaction<DB>,
  userId: string,
  need: number,
  movement: Extract<LotMovement, { kind: 'spend' }> | { kind: 'take-back'; fromLotOf?: string },
  entryId: number | null,
): Promise<LotDraw[]> {
  const lots = await listDrawableLots(trx, userId, {
    spend: movement.kind === 'spend',
    preferred: movement.kind === 'take-back' ? (movement.fromLotOf ?? null) : null,
    lock: true,
  });
  const { draws, left } = allocateDraws(lots, need);
  if (left > 0) {
    const drawable = need - left;
    // guard: lots-spend-refused
    throw new InsufficientBalanceError(userId, drawable, need, drawable);
  }
  if (entryId === null) await moveLots(trx, draws, -1);
  else await takeDraws(trx, [{ entryId, draws }], movement.kind === 'spend' ? [movement.alongside] : []);
  return draws;
}

/**
 * A capture's draws: `need` tokens from the lots the hold reserved, in their order (the hold's
 * reservation guarantees they are there: every other draw leaves reserved tokens alone). The
 * caller holds the wallet lock (every writer of a wallet's lots takes it first) and has checked
 * `need` is at most the hold's amount.
 */
function holdDraws(movement: Extract<LotMovement, { kind: 'capture' }>, need: number): LotDraw[] {
  const { draws, left } = allocateDraws(
    movement.reserved.map((lot) => ({ id: lot.lotId, free: lot.amount })),
    need,
  );
  if (left > 0) throw new Error(`hold ${movement.holdId} reserves less than the ${need} tokens its capture draws`);
  return draws;
}

/**
 * Returns a give-back to the lots the original debit drew from, in the order it drew them (its
 * draws' positions; a reinstatement's first draw is its payment's own lot), never more to a lot
 * than the debit took from it nor past the lot's amount; what finds no room gets a lot of its own.
 */
async function giveBack(trx: Transaction<DB>, entry: LedgerEntryRow, of: string): Promise<LotDraw[]> {
  // guard: lots-give-back-drawn
  const drawn = await sql<{ lot_id: number; drawn: number; amount: number; remaining: number }>`
    WITH original AS (
      SELECT d.lot_id, d.amount AS drawn, d.position
        FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
       WHERE e.reference = ${of} AND e.user_id = ${entry.user_id} AND e.amount < 0),
    locked AS MATERIALIZED (
      SELECT l.id, l.amount, l.remaining FROM credit_lots l
       WHERE l.id IN (SELECT lot_id FROM original)
       ORDER BY l.id
         FOR UPDATE)
    SELECT o.lot_id, o.drawn, l.amount, l.remaining
      FROM original o JOIN locked l ON l.id = o.lot_id
     ORDER BY o.position NULLS LAST, o.lot_id`.execute(trx);
  const returns: { lotId: number; amount: number }[] = [];
  let left = entry.amount;
  for (const lot of drawn.rows) {
    if (left === 0) break;
    const room = Math.min(Number(lot.drawn), Number(lot.amount) - Number(lot.remaining));
    const back = Math.min(left, room);
    if (back <= 0) continue;
    returns.push({ lotId: Number(lot.lot_id), amount: back });
    left -= back;
  }
  await moveLots(trx, returns, 1);
  if (left > 0) {
    const lotId = await createLot(trx, {
      userId: entry.user_id,
      category: 'purchased',
      source: entry.reference,
      amount: left,
      expiresAt: null,
    });
    returns.push({ lotId, amount: left });
  }
  await recordDraws(trx, [{ entryId: entry.id, draws: returns }]);
  return returns;
}

export async function moveLots(trx: Transaction<DB>, moves: { lotId: number; amount: number }[], sign: 1 | -1) {
  if (moves.length === 0) return;
  const values = sql.join(moves.map((m) => sql`(${m.lotId}::bigint, ${m.amount * sign}::bigint)`));
  await sql`
    UPDATE credit_lots l SET remaining = l.remaining + m.delta
      FROM (VALUES ${values}) AS m (id, delta)
     WHERE l.id = m.id`.execute(trx);
}

/**
 * Takes entries' draws from their lots and records them (`ledger_draws`, each entry's in its
 * order) in ONE statement: a spend's, a capture's or an expiry's lots move in the same round trip
 * as its draws are written (moveLots then recordDraws took two). A lot several draws name moves
 * by their sum. The lots' CHECK (remaining >= 0) refuses a take of more than a lot holds.
 */
async function takeDraws(
  trx: Transaction<DB>,
  entries: readonly { entryId: number; draws: readonly LotDraw[] }[],
  /** The spends' own statements (LotMovement's `alongside`), in the same round trip. */
  alongside: readonly (RawBuilder<unknown> | undefined)[] = [],
) {
  const draws = entries.flatMap(({ entryId, draws: own }) =>
    own.map((d, position) => ({ entryId, lotId: d.lotId, amount: d.amount, position })),
  );
  if (draws.length === 0) return;
  const taken = new Map<number, number>();
  for (const { lotId, amount } of draws) taken.set(lotId, (taken.get(lotId) ?? 0) + amount);
  const own = alongside.filter((statement) => statement !== undefined);
  // Literal rows, not arrays: the planner sees how few lots move and probes their primary key
  // (over an array of unknown length it scans credit_lots: 10 to 15 times the statement's time).
  // guard: draws-taken-with-their-lots
  await sql`
    WITH moved AS (
      UPDATE credit_lots l SET remaining = l.remaining - m.amount
        FROM (VALUES ${sql.join([...taken].map(([lotId, amount]) => sql`(${lotId}::bigint, ${amount}::bigint)`))})
             AS m (lot_id, amount)
       WHERE l.id = m.lot_id)
    ${sql.join(
      own.map((statement, index) => sql`, ${sql.raw(`alongside_${index}`)} AS (${statement})`),
      sql``,
    )}
    INSERT INTO ledger_draws (ledger_entry_id, lot_id, amount, position)
    VALUES ${sql.join(draws.map((d) => sql`(${d.entryId}, ${d.lotId}, ${d.amount}, ${d.position})`))}`.execute(trx);
}

/** Records entries' draws (`ledger_draws`, each entry's in its order), in one insert. */
async function recordDraws(trx: Transaction<DB>, entries: readonly { entryId: number; draws: readonly LotDraw[] }[]) {
  const rows = entries.flatMap(({ entryId, draws }) =>
    draws.map((d, position) => ({ ledger_entry_id: entryId, lot_id: d.lotId, amount: d.amount, position })),
  );
  if (rows.length === 0) return;
  await trx.insertInto('ledger_draws').values(rows).execute();
}

/**
 * The movement of an entry that needs nothing particular of lots: a credit creates a never-expiring
 * `purchased` lot, a debit is a spend. For tests and tools that post plain entries.
 */
export function plainLots(amount: number): LotMovement {
  return amount > 0 ? { kind: 'credit', category: 'purchased', expiresAt: null } : { kind: 'spend' };
}
