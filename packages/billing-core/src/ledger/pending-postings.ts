import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import type { LedgerPosting, PostLedgerEntryResult } from './ledger-posting';
import { postLedgerEntries } from './post-ledger-entries';

/**
 * Postings handed over in one unit of work and not made yet (an inbox handler's `postThen`).
 * The writer says what it wants posted and what its answer means; the ledger decides how they are
 * grouped: `post()` makes every pending one with postLedgerEntries (those on distinct wallets in
 * one statement, a wallet's in the order handed over, all or nothing), so a batch's credits cost
 * one statement and a batch of one costs postLedgerEntry's.
 */
export interface PendingPostings {
  /**
   * Hands a posting over. `then` is told its answer when `post()` makes it; the returned reader
   * gives what `then` returned, and throws when read before.
   */
  add<T>(posting: LedgerPosting, then: (posted: PostLedgerEntryResult) => T): () => T;
  /** Makes every posting handed over and not made yet (nothing when none is). */
  post(): Promise<void>;
}

export function pendingPostings(uow: UnitOfWork): PendingPostings {
  let pending: { posting: LedgerPosting; settle: (posted: PostLedgerEntryResult) => void }[] = [];
  return {
    add<T>(posting: LedgerPosting, then: (posted: PostLedgerEntryResult) => T): () => T {
      let answer: { value: T } | undefined;
      pending.push({
        posting,
        settle: (posted) => {
          answer = { value: then(posted) };
        },
      });
      return () => {
        if (answer === undefined) throw new Error(`posting ${posting.reference} was read before it was made`);
        return answer.value;
      };
    },
    async post(): Promise<void> {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      // guard: inbox-batch-postings
      const posted = await postLedgerEntries(
        uow,
        batch.map((item) => item.posting),
      );
      for (const [index, item] of batch.entries()) item.settle(posted[index] as PostLedgerEntryResult);
    },
  };
}
