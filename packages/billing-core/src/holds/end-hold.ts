import { sql } from 'kysely';
import type { HoldRow } from '../db/schema';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { takeFreedVoidedTokens } from '../ledger/voided-lots';
import { references } from '../references';
import { recoverShortfallsFromHold } from '../refunds/take-back-shortfalls';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { giveBackHoldUses } from './give-back-hold-uses';
import { lockWalletFunds } from './lock-wallet-funds';

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
 * A released or expired hold answers `not-active`.
 */
export async function captureHold(
  uow: UnitOfWork,
  request: { userId: string; holdId: string; amount?: number | undefined },
): Promise<CaptureHoldResult> {
  const funds = await lockWalletFunds(uow, request.userId, { holdId: request.holdId });
  const { hold } = funds;
  if (!hold) return { kind: 'not-found' };
  // guard: capture-fence
  if (hold.status === 'captured') return { kind: 'already', answer: captureAnswerOf(hold) };
  if (hold.status === 'released') return { kind: 'not-active', status: 'released' };
  if (hold.expired) return { kind: 'not-active', status: 'expired' };
  // A hold by estimate is captured by its actual quantities (capturePricedHold), never by an amount.
  if (hold.priced) return { kind: 'priced' };
  const amount = Number(hold.amount);
  const captured = request.amount ?? amount;
  if (captured > amount) return { kind: 'too-much', amount };

  const reference = references.holdCapture(hold.id);
  const posted = await postHoldCapture(uow, request.userId, hold, captured);
  // The status above is the fence: a posted capture always finds its hold captured.
  if (posted.kind !== 'posted') throw new Error(`hold ${hold.id} is held but its capture ${reference} is posted`);
  return {
    kind: 'ended',
    answer: captureAnswerOf(
      await endHold(
        uow,
        hold,
        { status: 'captured', captured, released: amount - captured, reference },
        { balance: posted.entry.balance_after, held: funds.held, shortfallsOpen: funds.shortfallsOpen },
      ),
    ),
  };
}

/**
 * Posts a hold's capture under `hold:{id}:capture`: `captured` tokens (at most what it reserves)
 * drawn exactly from the lots it reserved, for the hold's reason; `messageData` goes with the
 * entry's app webhook message.
 */
export function postHoldCapture(
  uow: UnitOfWork,
  userId: string,
  hold: HoldRow,
  captured: number,
  messageData?: Readonly<Record<string, unknown>>,
) {
  return postLedgerEntry(uow, {
    userId,
    reference: references.holdCapture(hold.id),
    amount: -captured,
    reason: hold.reason,
    lots: { kind: 'capture', holdId: hold.id },
    messageData,
  });
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

/**
 * Marks the hold ended (it stops counting in `held` at once) with the answer a repeat returns
 * (the wallet's balance and available right after), then takes what it frees on a voided lot
 * and lets the rest settle an open shortfall; only when that moved tokens is the answer written
 * again. `funds`: the wallet as
 * lockWalletFunds read it, `balance` the balance after the capture's debit (if any).
 */
export async function endHold(
  uow: UnitOfWork,
  hold: HoldRow,
  end: {
    status: 'captured' | 'released';
    captured: number | null;
    released: number;
    reference: string | null;
    /** A priced capture's excess and debt, when known as it ends (capturePricedHold). */
    excess?: number;
    debt?: number;
  },
  funds: { balance: number; held: number; shortfallsOpen: boolean },
): Promise<HoldRow> {
  const { trx } = uow;
  const held = funds.held - Number(hold.amount);
  const ended = await sql<HoldRow>`
    UPDATE holds SET status = ${end.status}, captured = ${end.captured}, released = ${end.released},
                     ledger_reference = ${end.reference}, settled_at = now(),
                     excess = ${end.excess ?? null}, debt = ${end.debt ?? null},
                     answer_balance = ${funds.balance}, answer_available = ${funds.balance - held}
     WHERE id = ${hold.id} RETURNING *`.execute(trx);
  // A released hold by estimate gives its use back: it no longer counts against the free allowance.
  // guard: released-hold-gives-use-back
  if (hold.priced && end.status === 'released') await giveBackHoldUses(uow, [hold.id]);
  // What the hold frees on a voided lot is taken at once (docs/lots.md "Voids"); only the rest is the user's.
  // guard: hold-end-takes-voided
  const voided = end.released > 0 ? (await takeFreedVoidedTokens(uow, hold.user_id, { holdId: hold.id })).taken : 0;
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
  const row =
    taken === 0
      ? ended.rows[0]
      : (
          await sql<HoldRow>`
            UPDATE holds SET answer_balance = ${funds.balance - taken}, answer_available = ${funds.balance - taken - held}
             WHERE id = ${hold.id} RETURNING *`.execute(trx)
        ).rows[0];
  if (!row) throw new Error(`hold ${hold.id} vanished`);
  return row;
}
