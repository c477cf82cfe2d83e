import { sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import { lockWalletForSpend } from '../holds/lock-wallet-funds';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';

export interface DebitRequest {
  /** The canonical user. */
  userId: string;
  /** The ledger reference (`references.debit(appReference)`): the debit's fence. */
  reference: string;
  /** Whole tokens, positive. */
  amount: number;
  reason: string;
}

export interface DebitAnswer {
  ledgerReference: string;
  amount: number;
  /** The balance right after the debit (the same on every retry). */
  balance: number;
  /** The wallet's available (balance less active holds): right after a new debit, now on a retry. */
  available: number;
  draws: { lotId: number; amount: number }[];
}

export type DebitResult =
  | { kind: 'debited'; answer: DebitAnswer }
  /** The reference debited the same before: nothing debited now, the first debit's answer. */
  | { kind: 'already-debited'; answer: DebitAnswer }
  /** The reference debited another amount or user: the caller's conflict (409). */
  | { kind: 'conflict'; message: string }
  /** Short: nothing debited. `available`: what the debit could have had. */
  | { kind: 'insufficient'; available: number; requested: number }
  /** A spend limit refuses it (402 spend_limit_reached): nothing debited. */
  | { kind: 'spend-limit'; refusal: SpendLimitRefusal };

/**
 * An app's debit (docs/holds.md "Debits"): spends `amount` from the unheld part of lots that have
 * not expired, in the draw order, under the wallet lock (lockWalletFunds, which settles lapsed
 * holds first), in its own unit of work. The reference is the fence: under the lock an entry
 * already posted under it answers (the same amount: its first answer; another: a conflict) and
 * nothing is debited, with or without an Idempotency-Key; the unique ledger reference backs it
 * against a twin on another wallet. Past a spend limit (spendLimitRefusal, after the fence: a
 * retry is never refused) or short of `available` it debits nothing (402).
 */
export async function debitTokens(
  deps: UnitOfWorkDeps & { spendLimits: SpendLimitDefaults },
  request: DebitRequest,
): Promise<DebitResult> {
  try {
    return await inUnitOfWork(deps, (uow) => debitInUnit(uow, request, deps.spendLimits));
  } catch (error) {
    // The spend's own check (an expired lot's tokens count in available but cannot be spent).
    if (error instanceof InsufficientBalanceError) {
      return { kind: 'insufficient', available: error.available, requested: request.amount };
    }
    if (error instanceof LedgerReferenceConflictError && error.reference === request.reference) {
      return { kind: 'conflict', message: `reference ${request.reference} already debited another amount or user` };
    }
    throw error;
  }
}

async function debitInUnit(
  uow: UnitOfWork,
  request: DebitRequest,
  spendLimits: SpendLimitDefaults,
): Promise<DebitResult> {
  const { trx } = uow;
  const funds = await lockWalletForSpend(uow, request.userId);
  const previous = await trx
    .selectFrom('ledger_entries')
    .selectAll()
    .where('reference', '=', request.reference)
    .executeTakeFirst();
  // guard: debit-reference-fence
  if (previous) {
    if (previous.user_id !== request.userId || previous.amount !== -request.amount) {
      return { kind: 'conflict', message: `reference ${request.reference} already debited another amount or user` };
    }
    return {
      kind: 'already-debited',
      answer: {
        ledgerReference: request.reference,
        amount: request.amount,
        balance: previous.balance_after,
        available: funds.available,
        draws: await drawsOf(uow, previous.id),
      },
    };
  }
  const refusal = spendLimitRefusal(funds.spend, spendLimits, funds.held, request.amount);
  // guard: debit-spend-limit
  if (refusal) return { kind: 'spend-limit', refusal };
  if (funds.available < request.amount) {
    return { kind: 'insufficient', available: Math.max(0, funds.available), requested: request.amount };
  }
  const posted = await postLedgerEntry(uow, {
    userId: request.userId,
    reference: request.reference,
    amount: -request.amount,
    reason: request.reason,
    lots: { kind: 'spend' },
  });
  const entry = posted.entry;
  // guard: debit-triggers-auto-topup
  await triggerAutoTopup(uow, request.userId, funds.autoTopup, funds.available - request.amount);
  return {
    kind: posted.kind === 'posted' ? 'debited' : 'already-debited',
    answer: {
      ledgerReference: request.reference,
      amount: request.amount,
      balance: entry.balance_after,
      available: entry.balance_after - funds.held,
      draws: await drawsOf(uow, entry.id),
    },
  };
}

async function drawsOf(uow: UnitOfWork, entryId: number): Promise<{ lotId: number; amount: number }[]> {
  const rows = await sql<{ lot_id: number; amount: number }>`
    SELECT lot_id, amount FROM ledger_draws WHERE ledger_entry_id = ${entryId} ORDER BY lot_id`.execute(uow.trx);
  return rows.rows.map((row) => ({ lotId: Number(row.lot_id), amount: Number(row.amount) }));
}
