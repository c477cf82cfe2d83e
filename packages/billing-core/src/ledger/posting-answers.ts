import type { Transaction } from 'kysely';
import type { DB, LedgerEntryRow } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { settleDebtFromCredit } from './debt';
import type { LedgerPosting, PostLedgerEntryResult } from './ledger-posting';
import { applyLotMovement, drawTogether } from './lots';
import type { LockedInsert } from './posting-statement';

/**
 * A posting's answer once the posting statement answered for a wallet that exists (postLedgerEntry
 * and postLedgerEntries read it alike): a posted entry's lots moved and its messages recorded; an
 * entry already under the reference `already-posted`, or LedgerReferenceConflictError when it
 * posts another user or amount; InsufficientBalanceError for a debit the balance does not cover.
 */
export async function finishPosting(
  uow: UnitOfWork,
  posting: LedgerPosting,
  outcome: LockedInsert,
): Promise<PostLedgerEntryResult> {
  if (outcome.kind === 'posted') {
    // Under the wallet lock the statement took: the entry's lots move in the same transaction
    // (a credit's lot, when the statement found the lots matching the balance, is already in).
    // guard: posting-moves-lots
    const draws = await applyLotMovement(uow.trx, outcome.entry, posting.lots, outcome.lots);
    uow.outbox.written(outcome.messageIds);
    // guard: paid-credit-settles-debt
    if (posting.settlesDebt) await settleDebtFromCredit(uow, posting, outcome.walletDebt);
    return draws === null ? { kind: 'posted', entry: outcome.entry } : { kind: 'posted', entry: outcome.entry, draws };
  }
  if (outcome.kind === 'existing') return alreadyPosted(outcome.entry, posting);
  const balanceAfter = outcome.balance + posting.amount;
  if (balanceAfter < 0) throw new InsufficientBalanceError(posting.userId, outcome.balance, -posting.amount);

  // Another transaction committed the same reference (for another wallet) after this statement's
  // snapshot was taken: the insert found the conflict, the look-up could not see it.
  const winner = await findEntryByReference(uow.trx, posting.reference);
  if (!winner) throw new Error(`ledger reference ${posting.reference} conflicted but cannot be read`);
  return alreadyPosted(winner, posting);
}

/** The same reference is an answer only for the same user and amount; anything else is loud. */
function alreadyPosted(entry: LedgerEntryRow, posting: LedgerPosting): PostLedgerEntryResult {
  // guard: ledger-reference-conflict
  if (entry.user_id !== posting.userId || entry.amount !== posting.amount) {
    throw new LedgerReferenceConflictError(
      posting.reference,
      { userId: entry.user_id, amount: entry.amount },
      { userId: posting.userId, amount: posting.amount },
    );
  }
  return { kind: 'already-posted', entry };
}

function findEntryByReference(trx: Transaction<DB>, reference: string): Promise<LedgerEntryRow | undefined> {
  return trx.selectFrom('ledger_entries').selectAll().where('reference', '=', reference).executeTakeFirst();
}

/**
 * finishPosting for the postings of one posting statement of several (distinct users and
 * references), by position: the spends and captures it posted on lots that matched their balances
 * draw together (drawTogether: the spends' lots in one read, then one statement that takes and
 * records every draw); every other answer as finishPosting reads it, in order.
 */
export async function finishPostings(
  uow: UnitOfWork,
  items: readonly { posting: LedgerPosting; outcome: LockedInsert }[],
): Promise<PostLedgerEntryResult[]> {
  const matched = items.flatMap(({ posting, outcome }) =>
    outcome.kind === 'posted' && outcome.lots.matchBalance
      ? [{ lots: posting.lots, entry: outcome.entry, recorded: outcome.lots.drawsRecorded === true }]
      : [],
  );
  const spends = matched.flatMap(({ lots, entry }) =>
    lots.kind === 'spend' ? [lots.alongside ? { ...entry, alongside: lots.alongside } : entry] : [],
  );
  // A capture whose draws the posting statement recorded (knownDrawsOf) has nothing left to draw.
  const captures = matched.flatMap(({ lots, entry, recorded }) =>
    lots.kind === 'capture' && !recorded ? [{ entry, movement: lots }] : [],
  );
  // guard: batch-spends-draw-together
  const drawn = spends.length + captures.length > 1 ? await drawTogether(uow.trx, spends, captures) : null;
  const results: PostLedgerEntryResult[] = [];
  for (const { posting, outcome } of items) {
    const draws = drawn && outcome.kind === 'posted' ? drawn.get(outcome.entry.id) : undefined;
    if (draws === undefined || outcome.kind !== 'posted') {
      results.push(await finishPosting(uow, posting, outcome));
      continue;
    }
    uow.outbox.written(outcome.messageIds);
    results.push({ kind: 'posted', entry: outcome.entry, draws });
  }
  return results;
}
