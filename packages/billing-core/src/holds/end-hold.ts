import { type SqlBatchArrayType, sqlBatchArray } from '@tally/platform/db';
import { sql } from 'kysely';
import type { HoldRow } from '../db/schema';
import { postLedgerEntries } from '../ledger/post-ledger-entries';
import type { LedgerPosting, PostLedgerEntryResult } from '../ledger/post-ledger-entry';
import { takeFreedVoidedTokens } from '../ledger/voided-lots';
import { references } from '../references';
import { recoverShortfallsFromHold } from '../refunds/take-back-shortfalls';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { giveBackHoldUses } from './give-back-hold-uses';
import { type LockedFunds, type LockedHold, lockWalletFunds } from './lock-wallet-funds';

export interface CaptureAnswer {
  id: string;
  status: 'captured';
  captured: number;
  released: number;
  ledgerReference: string;
  /** The wallet's balance and available right after the capture. */
  balance: number;
  available: number;
}

export interface ReleaseAnswer {
  id: string;
  status: 'released';
  /** The wallet's available right after the release. */
  available: number;
}

export type EndHoldResult<Answer> =
  | { kind: 'ended'; answer: Answer }
  /** Ended the same way before: the first answer, nothing moved now. */
  | { kind: 'already'; answer: Answer }
  /** Released, captured (for a release), or expired: 409 hold_not_active. */
  | { kind: 'not-active'; status: 'captured' | 'released' | 'expired' }
  /** No such hold for this user. */
  | { kind: 'not-found' }
  /** A capture of more than the hold reserves. */
  | { kind: 'too-much'; amount: number };

export type CaptureHoldResult =
  | EndHoldResult<CaptureAnswer>
  /** An amount capture of a hold placed by a feature's estimate (it takes the actual quantities). */
  | { kind: 'priced' };

/** A captured hold's answer, as stored on its row (the same on every retry). */
export function captureAnswerOf(hold: HoldRow): CaptureAnswer {
  return {
    id: hold.id,
    status: 'captured',
    captured: Number(hold.captured),
    released: Number(hold.released),
    ledgerReference: hold.ledger_reference ?? references.holdCapture(hold.id),
    balance: Number(hold.answer_balance),
    available: Number(hold.answer_available),
  };
}

/**
 * Captures a hold (docs/holds.md): one debit `hold:{id}:capture` of `amount` (default the whole
 * hold; at most it), drawn exactly from the lots the hold reserved (even one that expired while
 * held); the rest is freed, and settles first a take-back shortfall recorded while the hold was
 * active. Under the wallet lock (lockWalletFunds), so concurrent captures serialize. The hold's
 * status is the capture's fence: a second capture finds it `captured` and answers the first
 * capture's answer (stored on the row), posting nothing; the ledger reference is a second fence.
 * A released or expired hold answers `not-active`. The read after the lock brings the hold with
 * the lots it reserves, so a capture is the lock, that read, the posting (its lots moved and its
 * draws recorded) and the hold's end.
 */
export async function captureHold(uow: UnitOfWork, request: CaptureRequest): Promise<CaptureHoldResult> {
  const funds = await lockWalletFunds(uow, request.userId, { holdId: request.holdId });
  const decision = decideCapture(request, funds.hold);
  if (decision.kind === 'answer') return decision.result;
  const [row] = await captureDecided(uow, [
    { userId: request.userId, funds, hold: decision.hold, captured: decision.captured },
  ]);
  return { kind: 'ended', answer: captureAnswerOf(row as HoldRow) };
}

export interface CaptureRequest {
  /** The canonical user. */
  userId: string;
  holdId: string;
  /** At most the hold's amount; the whole hold when undefined. */
  amount?: number | undefined;
}

/** What a capture does under its wallet lock once its hold is read. */
export type CaptureDecision =
  | { kind: 'answer'; result: CaptureHoldResult }
  | { kind: 'capture'; hold: LockedHold; captured: number };

/**
 * The capture's rules under the wallet lock (one definition for a capture alone and in a batch):
 * the hold's status first (its fence: a captured hold answers its first capture), then whether
 * it is still active, how it was placed and whether the amount fits in it.
 */
export function decideCapture(request: CaptureRequest, hold: LockedHold | undefined): CaptureDecision {
  const answer = (result: CaptureHoldResult): CaptureDecision => ({ kind: 'answer', result });
  if (!hold) return answer({ kind: 'not-found' });
  // guard: capture-fence
  if (hold.status === 'captured') return answer({ kind: 'already', answer: captureAnswerOf(hold) });
  if (hold.status === 'released') return answer({ kind: 'not-active', status: 'released' });
  if (hold.expired) return answer({ kind: 'not-active', status: 'expired' });
  // A hold by estimate is captured by its actual quantities (capturePricedHold), never by an amount.
  if (hold.priced) return answer({ kind: 'priced' });
  const amount = Number(hold.amount);
  const captured = request.amount ?? amount;
  // guard: capture-at-most-held
  if (captured > amount) return answer({ kind: 'too-much', amount });
  return { kind: 'capture', hold, captured };
}

/**
 * A capture decided under its wallet lock (decideCapture, or a hold by estimate's
 * decidePricedCapture): the hold, what it captures of it, and for a hold by estimate the
 * actual use (written as the hold ends) and the message data of its capture's entry.
 */
export interface DecidedCapture {
  userId: string;
  funds: LockedFunds;
  hold: LockedHold;
  captured: number;
  priced?: {
    use: { quantities: Record<string, number>; cost: number };
    messageData: Readonly<Record<string, unknown>>;
    /** Within the hold (no excess): excess and debt 0, written as the hold ends; else the caller writes them. */
    withinHold: boolean;
  };
}

/**
 * Captures decided under the wallet locks of the caller's unit, one definition for a capture
 * alone and in a batch (captureHold, capturePricedHold, holdOperationsTogether): the
 * captures of tokens in ONE posting statement (postLedgerEntries: `hold:{id}:capture`, drawn
 * from the lots each hold reserved; none for a capture of 0), their holds ended in ONE update
 * (endHolds, with the uses of holds by estimate). Rows by position; throws what any throws (the
 * caller's unit rolls back whole).
 */
export async function captureDecided(uow: UnitOfWork, items: readonly DecidedCapture[]): Promise<HoldRow[]> {
  const charged = items.filter((item) => item.captured > 0);
  const posted = await postLedgerEntries(
    uow,
    charged.map((item) => capturePosting(item.userId, item.hold, item.captured, item.priced?.messageData)),
    // A throw rolls the whole unit back (runSpendsTogether runs its captures alone then).
    { savepoint: false },
  );
  const balances = new Map<DecidedCapture, number>();
  for (const [position, item] of charged.entries()) {
    const result = posted[position] as PostLedgerEntryResult;
    // The status is the fence: a posted capture always finds its hold captured.
    if (result.kind !== 'posted') {
      throw new Error(`hold ${item.hold.id} is held but its capture ${references.holdCapture(item.hold.id)} is posted`);
    }
    balances.set(item, result.entry.balance_after);
  }
  return endHolds(
    uow,
    items.map((item) => ({
      hold: item.hold,
      end: {
        status: 'captured',
        captured: item.captured,
        released: Number(item.hold.amount) - item.captured,
        reference: references.holdCapture(item.hold.id),
        ...(item.priced === undefined
          ? {}
          : { use: item.priced.use, ...(item.priced.withinHold ? { excess: 0, debt: 0 } : {}) }),
      },
      funds: {
        balance: balances.get(item) ?? item.funds.balance,
        held: item.funds.held,
        shortfallsOpen: item.funds.shortfallsOpen,
      },
    })),
  );
}

function capturePosting(
  userId: string,
  hold: LockedHold,
  captured: number,
  messageData?: Readonly<Record<string, unknown>>,
): LedgerPosting {
  return {
    userId,
    reference: references.holdCapture(hold.id),
    amount: -captured,
    reason: hold.reason,
    lots: { kind: 'capture', holdId: hold.id, reserved: hold.reserved },
    messageData,
  };
}

/**
 * Releases a hold (docs/holds.md): its tokens are unheld again (no ledger row), and settle first
 * a take-back shortfall recorded while it was active. Under the wallet lock. Releasing again
 * answers the first release; a captured or expired hold answers `not-active`. Also support's
 * release (admin API, console), audited by the caller.
 */
export async function releaseHold(
  uow: UnitOfWork,
  request: { userId: string; holdId: string },
): Promise<EndHoldResult<ReleaseAnswer>> {
  const funds = await lockWalletFunds(uow, request.userId, { holdId: request.holdId });
  const { hold } = funds;
  if (!hold) return { kind: 'not-found' };
  const answerOf = (row: HoldRow): ReleaseAnswer => ({
    id: row.id,
    status: 'released',
    available: Number(row.answer_available),
  });
  if (hold.status === 'released') return { kind: 'already', answer: answerOf(hold) };
  if (hold.status === 'captured') return { kind: 'not-active', status: 'captured' };
  if (hold.expired) return { kind: 'not-active', status: 'expired' };
  const ended = await endHold(
    uow,
    hold,
    { status: 'released', captured: null, released: Number(hold.amount), reference: null },
    funds,
  );
  return { kind: 'ended', answer: answerOf(ended) };
}

/** How a hold ends (endHold). */
export interface HoldEnd {
  status: 'captured' | 'released';
  captured: number | null;
  released: number;
  reference: string | null;
  /** A priced capture's excess and debt, when known as it ends (capturePricedHold). */
  excess?: number;
  debt?: number;
  /** A priced capture's actual use: its quantities and cost, written to the hold's use as it ends. */
  use?: { quantities: Record<string, number>; cost: number };
}

/** The wallet as lockWalletFunds read it, `balance` the balance after the capture's debit (if any). */
export interface EndingFunds {
  balance: number;
  held: number;
  shortfallsOpen: boolean;
}

/**
 * Marks the hold ended (it stops counting in `held` at once) with the answer a repeat returns
 * (the wallet's balance and available right after), then takes what it frees on a voided lot
 * and lets the rest settle an open shortfall; only when that moved tokens is the answer written
 * again.
 */
export async function endHold(uow: UnitOfWork, hold: LockedHold, end: HoldEnd, funds: EndingFunds): Promise<HoldRow> {
  const [row] = await endHolds(uow, [{ hold, end, funds }]);
  return row as HoldRow;
}

/**
 * The actual uses of the captures by estimate among `items` (their quantities and cost), as a
 * WITH of endHolds' update: the hold's use says what was used once it is captured.
 */
function actualUsesSql(items: readonly { hold: LockedHold; end: HoldEnd }[]) {
  // guard: priced-capture-keeps-actual-use
  const uses = items.flatMap(({ hold, end }) => (end.use === undefined ? [] : [{ id: hold.id, ...end.use }]));
  if (uses.length === 0) return sql``;
  // Each use found by a probe of the unique (source, reference) per hold (the LATERAL), then
  // updated by its row's address (under the wallet lock no other writer moves the use): a plan
  // made while feature_uses was empty (a prepared statement's generic one) cannot join them by a
  // scan of every hold's use, as the plain join was planned (a capture cost 1.1 ms of Postgres's
  // time there in the bench's holds phase, 0.16 ms once the table had statistics).
  const column = (type: SqlBatchArrayType, value: (use: (typeof uses)[number]) => unknown) =>
    sqlBatchArray(uses.map(value), type);
  return sql`WITH uses AS (
      UPDATE feature_uses u SET quantities = a.quantities, cost = a.cost
        FROM unnest(${column('text', (use) => use.id)}, ${column('jsonb', (use) => JSON.stringify(use.quantities))},
                    ${column('bigint', (use) => use.cost)}) AS a (reference, quantities, cost),
             LATERAL (SELECT f.ctid AS address FROM feature_uses f
                       WHERE f.source = 'hold' AND f.reference = a.reference LIMIT 1) AS f
       WHERE u.ctid = f.address)`;
}

/**
 * endHold for holds of distinct users (a batch's captures): the holds ended in ONE update, then
 * what each frees taken or settled, each as endHold does alone. Rows by position.
 */
async function endHolds(
  uow: UnitOfWork,
  items: readonly { hold: LockedHold; end: HoldEnd; funds: EndingFunds }[],
): Promise<HoldRow[]> {
  const { trx } = uow;
  // Each hold found by a probe of its primary key (the LATERAL), then updated by its row's address
  // (under the wallet lock no other writer moves it; a row moved anyway is missing from RETURNING,
  // and the unit fails below). A plain join by id was planned as a scan of every hold while the
  // table looked small (a custom plan per call too): 0.5 ms of a hold + capture's Postgres time
  // in the bench's holds phase. The probe's plan does not depend on the table's size, so the
  // arrays are hidden and it is planned once per connection.
  const column = (type: SqlBatchArrayType, value: (item: (typeof items)[number]) => unknown) =>
    sqlBatchArray(items.map(value), type);
  const heldAfter = (item: (typeof items)[number]) => item.funds.held - Number(item.hold.amount);
  const ended = await sql<HoldRow>`
    ${actualUsesSql(items)}
    UPDATE holds h SET status = v.status, captured = v.captured, released = v.released,
                       ledger_reference = v.reference, settled_at = now(), excess = v.excess, debt = v.debt,
                       answer_balance = v.balance, answer_available = v.available
      FROM unnest(${column('text', (item) => item.hold.id)}, ${column('text', (item) => item.end.status)},
                  ${column('bigint', (item) => item.end.captured)}, ${column('bigint', (item) => item.end.released)},
                  ${column('text', (item) => item.end.reference)}, ${column('bigint', (item) => item.end.excess ?? null)},
                  ${column('bigint', (item) => item.end.debt ?? null)}, ${column('bigint', (item) => item.funds.balance)},
                  ${column('bigint', (item) => item.funds.balance - heldAfter(item))})
           AS v (id, status, captured, released, reference, excess, debt, balance, available),
           LATERAL (SELECT x.ctid AS address FROM holds x WHERE x.id = v.id LIMIT 1) AS p
     WHERE h.ctid = p.address
    RETURNING h.*`.execute(trx);
  const byId = new Map(ended.rows.map((row) => [row.id, row]));
  const rows: HoldRow[] = [];
  for (const item of items) {
    const { hold, end, funds } = item;
    const endedRow = byId.get(hold.id);
    if (!endedRow) throw new Error(`hold ${hold.id} vanished`);
    // A released hold by estimate gives its use back: it no longer counts against the free allowance.
    // guard: released-hold-gives-use-back
    if (hold.priced && end.status === 'released') await giveBackHoldUses(uow, [hold.id]);
    // What the hold frees on a voided lot is taken at once (docs/lots.md "Voids"); only the rest is
    // the user's. No lot of it voided (read under the lock, which a void takes): nothing to take.
    // guard: hold-end-takes-voided
    const voided =
      end.released > 0 && hold.lotsVoided
        ? (await takeFreedVoidedTokens(uow, hold.user_id, { holdId: hold.id })).taken
        : 0;
    // No shortfall open (read under the lock; only a take-back, which needs the lock, opens one): nothing to settle.
    const recovered = !funds.shortfallsOpen
      ? 0
      : await recoverShortfallsFromHold(uow, {
          userId: hold.user_id,
          holdId: hold.id,
          ledgerMarker: Number(hold.ledger_marker),
          expiresAt: new Date(hold.expires_at),
          // guard: hold-end-frees-shortfall
          freedTokens: end.released - voided,
        });
    const taken = voided + recovered;
    const held = heldAfter(item);
    const row =
      taken === 0
        ? endedRow
        : (
            await sql<HoldRow>`
              UPDATE holds SET answer_balance = ${funds.balance - taken}, answer_available = ${funds.balance - taken - held}
               WHERE id = ${hold.id} RETURNING *`.execute(trx)
          ).rows[0];
    if (!row) throw new Error(`hold ${hold.id} vanished`);
    rows.push(row);
  }
  return rows;
}
