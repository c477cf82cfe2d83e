import type { BatchItemFailure } from '@tally/platform/db';
import { sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import type { LedgerEntryRow } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import { type LockedSpendFunds, lockWalletsForSpend, type SpendFenceSql } from '../holds/lock-wallet-funds';
import { postLedgerEntries } from '../ledger/post-ledger-entries';
import { type LedgerPosting, type PostLedgerEntryResult, postLedgerEntry } from '../ledger/post-ledger-entry';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import { runSpendsTogether } from '../unit-of-work/spends-together';
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

/**
 * debitTokens for several debits arriving together (the api's debit batcher, platform's
 * createTransactionBatcher), each answered exactly as debitTokens would answer it alone
 * (runSpendsTogether: each user's first debit in debitManyInUnit, its further ones in
 * debitInUnit, one commit; a unit that fails runs its debits alone).
 */
export function debitTokensTogether(
  deps: UnitOfWorkDeps & { spendLimits: SpendLimitDefaults },
  requests: readonly DebitRequest[],
): Promise<(DebitResult | BatchItemFailure)[]> {
  return runSpendsTogether(deps, requests, {
    keyOf: (request) => request,
    alone: (request) => debitTokens(deps, request),
    many: (uow, batch) => debitManyInUnit(uow, batch, deps.spendLimits),
    inUnit: (uow, request) => debitInUnit(uow, request, deps.spendLimits),
  });
}

async function debitInUnit(
  uow: UnitOfWork,
  request: DebitRequest,
  spendLimits: SpendLimitDefaults,
): Promise<DebitResult> {
  // The wallet locked and read with the entry under the reference, as a batch reads them (no statement of its own).
  const [locked] = await lockWalletsForSpend<LedgerEntryRow>(uow, [request], ledgerEntryFence);
  const { funds, previous: json } = locked as NonNullable<typeof locked>;
  const previous = json && ledgerEntryOfJson(json);
  const decision = decideDebit(request, funds, previous, spendLimits);
  if (decision.kind === 'answer') return decision.result;
  if (decision.kind === 'already-debited') return alreadyDebited(uow, request, funds, decision.entry);
  const posted = await postLedgerEntry(uow, debitPosting(request));
  return debited(uow, request, funds, posted);
}

/**
 * Several debits of distinct users and references in ONE unit of work (debitTokensTogether): the
 * wallets locked and read with each reference's fence in two statements (lockWalletsForSpend),
 * each decided as debitInUnit decides it, the ones to post in one posting statement whose spends
 * draw their lots together (postLedgerEntries), then the auto top-up trigger of each. Answers by
 * position; throws what any of them throws (the caller runs them one by one then).
 */
async function debitManyInUnit(
  uow: UnitOfWork,
  requests: readonly DebitRequest[],
  spendLimits: SpendLimitDefaults,
): Promise<DebitResult[]> {
  const locked = (await lockWalletsForSpend<LedgerEntryRow>(uow, requests, ledgerEntryFence)).map(
    ({ funds, previous }) => ({ funds, previous: previous && ledgerEntryOfJson(previous) }),
  );
  const results = new Array<DebitResult>(requests.length);
  const toPost: number[] = [];
  for (const [index, request] of requests.entries()) {
    const { funds, previous } = locked[index] as (typeof locked)[number];
    const decision = decideDebit(request, funds, previous, spendLimits);
    if (decision.kind === 'answer') results[index] = decision.result;
    else if (decision.kind === 'already-debited') {
      results[index] = await alreadyDebited(uow, request, funds, decision.entry);
    } else toPost.push(index);
  }
  const posted = await postLedgerEntries(
    uow,
    toPost.map((index) => debitPosting(requests[index] as DebitRequest)),
    // A throw rolls the whole unit back (runSpendsTogether runs its debits alone then).
    { savepoint: false },
  );
  for (const [position, index] of toPost.entries()) {
    const { funds } = locked[index] as (typeof locked)[number];
    results[index] = await debited(
      uow,
      requests[index] as DebitRequest,
      funds,
      posted[position] as PostLedgerEntryResult,
    );
  }
  return results;
}

/** What a debit does under its wallet lock once its funds and its reference's entry are read. */
type DebitDecision =
  | { kind: 'answer'; result: DebitResult }
  | { kind: 'already-debited'; entry: Pick<LedgerEntryRow, 'id' | 'balance_after'> }
  | { kind: 'post' };

/**
 * The debit's rules, under the wallet lock (one definition for a debit alone and in a batch): the
 * reference's fence first (the same user and amount: its first answer; another: a conflict),
 * then the spend limits (never for a retry), then `available`.
 */
function decideDebit(
  request: DebitRequest,
  funds: LockedSpendFunds,
  previous: Pick<LedgerEntryRow, 'id' | 'user_id' | 'amount' | 'balance_after'> | undefined,
  spendLimits: SpendLimitDefaults,
): DebitDecision {
  // guard: debit-reference-fence
  if (previous) {
    if (previous.user_id !== request.userId || previous.amount !== -request.amount) {
      return { kind: 'answer', result: conflictOf(request) };
    }
    return { kind: 'already-debited', entry: previous };
  }
  const refusal = spendLimitRefusal(funds.spend, spendLimits, funds.held, request.amount);
  // guard: debit-spend-limit
  if (refusal) return { kind: 'answer', result: { kind: 'spend-limit', refusal } };
  if (funds.available < request.amount) {
    return {
      kind: 'answer',
      result: { kind: 'insufficient', available: Math.max(0, funds.available), requested: request.amount },
    };
  }
  return { kind: 'post' };
}

function conflictOf(request: DebitRequest): DebitResult {
  return { kind: 'conflict', message: `reference ${request.reference} already debited another amount or user` };
}

function debitPosting(request: DebitRequest): LedgerPosting {
  return {
    userId: request.userId,
    reference: request.reference,
    amount: -request.amount,
    reason: request.reason,
    lots: { kind: 'spend' },
  };
}

async function alreadyDebited(
  uow: UnitOfWork,
  request: DebitRequest,
  funds: LockedSpendFunds,
  entry: Pick<LedgerEntryRow, 'id' | 'balance_after'>,
): Promise<DebitResult> {
  return {
    kind: 'already-debited',
    answer: {
      ledgerReference: request.reference,
      amount: request.amount,
      balance: entry.balance_after,
      available: funds.available,
      draws: await drawsOf(uow, entry.id),
    },
  };
}

/** A posted debit's answer, after its auto top-up trigger. */
async function debited(
  uow: UnitOfWork,
  request: DebitRequest,
  funds: LockedSpendFunds,
  posted: PostLedgerEntryResult,
): Promise<DebitResult> {
  const entry = posted.entry;
  // guard: debit-triggers-auto-topup
  await triggerAutoTopup(uow, request.userId, funds.autoTopup, funds.available - request.amount);
  const recorded = posted.kind === 'posted' ? posted.draws : undefined;
  return {
    kind: posted.kind === 'posted' ? 'debited' : 'already-debited',
    answer: {
      ledgerReference: request.reference,
      amount: request.amount,
      balance: entry.balance_after,
      available: entry.balance_after - funds.held,
      // The draws the posting recorded, in the order a retry reads them (drawsOf).
      draws:
        recorded === undefined
          ? await drawsOf(uow, entry.id)
          : [...recorded].sort((a, b) => a.lotId - b.lotId).map(({ lotId, amount }) => ({ lotId, amount })),
    },
  };
}

async function drawsOf(uow: UnitOfWork, entryId: number): Promise<{ lotId: number; amount: number }[]> {
  const rows = await sql<{ lot_id: number; amount: number }>`
    SELECT lot_id, amount FROM ledger_draws WHERE ledger_entry_id = ${entryId} ORDER BY lot_id`.execute(uow.trx);
  return rows.rows.map((row) => ({ lotId: Number(row.lot_id), amount: Number(row.amount) }));
}

/** A debit's fence in a batch's read (lockWalletsForSpend): the ledger entry under its reference. */
const ledgerEntryFence: SpendFenceSql = (reference) =>
  sql`SELECT row_to_json(e) FROM ledger_entries e WHERE e.reference = ${reference}`;

/** A ledger entry read as row_to_json: its bigint columns as numbers, its time as a Date (as the pool parses them). */
function ledgerEntryOfJson(json: LedgerEntryRow): LedgerEntryRow {
  return {
    ...json,
    id: Number(json.id),
    amount: Number(json.amount),
    balance_before: Number(json.balance_before),
    balance_after: Number(json.balance_after),
    inbox_event_id: json.inbox_event_id === null ? null : Number(json.inbox_event_id),
    created_at: new Date(json.created_at as unknown as string),
  } as LedgerEntryRow;
}
