import { atomically, type UnitOfWork } from '../unit-of-work/unit-of-work';
import { assertPostable, type LedgerPosting, type PostLedgerEntryResult } from './ledger-posting';
import { postLedgerEntry } from './post-ledger-entry';
import { finishPostings } from './posting-answers';
import { lockWalletsAndInsert } from './posting-statement';

/**
 * postLedgerEntry for each posting in order, in the caller's unit of work, with the same effects,
 * answers (in the postings' order) and errors, but in fewer statements: postings on distinct
 * wallets (and distinct references) share one posting statement. They go in rounds, each taking
 * every posting whose wallet and reference no earlier posting still waits on, so a wallet's
 * postings keep their order. A posting whose wallet does not exist yet runs alone
 * (postLedgerEntry creates the wallet); the other answers are read as postLedgerEntry reads its
 * own (a debit the balance does not cover throws, a reference another transaction posted after
 * the statement's snapshot is looked up). The inbox engine posts the postings its handlers hand
 * over this way (pending-postings.ts, docs/engine.md).
 *
 * All or nothing: when one posting throws, none of the call's postings is kept (atomically: a
 * savepoint), even if the caller catches the error and commits.
 */
export async function postLedgerEntries(
  uow: UnitOfWork,
  postings: readonly LedgerPosting[],
  options: {
    /**
     * False when the caller never commits after a throw (its unit of work rolls back whole, as
     * debitTokensTogether's does): no savepoint is needed, and its two round trips are saved.
     */
    savepoint?: boolean;
  } = {},
): Promise<PostLedgerEntryResult[]> {
  for (const posting of postings) assertPostable(posting);
  if (postings.length === 0) return [];
  // One posting needs no savepoint: its statement inserts nothing when it answers a conflict or a
  // shortfall, and an entry whose lots failed to move cannot commit (credit_lots_sum_trg).
  if (postings.length === 1) return [await postLedgerEntry(uow, postings[0] as LedgerPosting)];
  if (options.savepoint === false) return postInRounds(uow, postings);
  // guard: posting-batch-all-or-nothing
  return atomically(uow, () => postInRounds(uow, postings));
}

async function postInRounds(uow: UnitOfWork, postings: readonly LedgerPosting[]): Promise<PostLedgerEntryResult[]> {
  const results = new Array<PostLedgerEntryResult>(postings.length);
  let waiting = postings.map((posting, index) => ({ posting, index }));
  while (waiting.length > 0) {
    const round: typeof waiting = [];
    const later: typeof waiting = [];
    const taken = new Set<string>();
    for (const item of waiting) {
      const { userId, reference } = item.posting;
      // guard: posting-batch-round
      const free = !taken.has(`u:${userId}`) && !taken.has(`r:${reference}`);
      (free ? round : later).push(item);
      taken.add(`u:${userId}`).add(`r:${reference}`);
    }
    if (round.length === 1) {
      const [only] = round as [(typeof waiting)[number]];
      results[only.index] = await postLedgerEntry(uow, only.posting);
    } else {
      const outcomes = await lockWalletsAndInsert(uow, round);
      const found = round.flatMap(({ posting, index }, position) => {
        const outcome = outcomes[position];
        return outcome === undefined ? [] : [{ posting, index, outcome }];
      });
      const answers = await finishPostings(uow, found);
      for (const [position, { index }] of found.entries()) results[index] = answers[position] as PostLedgerEntryResult;
      // No wallet yet: postLedgerEntry creates it.
      for (const [position, { posting, index }] of round.entries()) {
        if (outcomes[position] === undefined) results[index] = await postLedgerEntry(uow, posting);
      }
    }
    waiting = later;
  }
  return results;
}
