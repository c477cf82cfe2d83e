import type { Clock } from '../clock';
import type { InboxEventRow, Provider } from '../db/schema';
import type { LedgerPosting, PostLedgerEntryResult } from '../ledger/post-ledger-entry';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import type { IgnoredOutcomeCode, ProcessedOutcomeCode } from './outcome-codes';

/**
 * What applying one event did (or why it must wait). The code is a member of outcome-codes.ts
 * (documented in docs/outcomes.md); the detail next to it is for people.
 */
export type HandlerResult =
  | { kind: 'processed'; code: ProcessedOutcomeCode; detail: string }
  | { kind: 'ignored'; code: IgnoredOutcomeCode; detail: string }
  /**
   * A prerequisite has not arrived yet: try again after `delayMs` (or a growing default). Does
   * not spend the failure budget; bounded by the engine's maximum wait.
   */
  | { kind: 'retry-later'; reason: string; delayMs?: number }
  /**
   * The event's effects end with one ledger posting, handed to the engine instead of made: the
   * engine posts it in the same unit of work, right after the handler (with the other postings of
   * a batch of first runs, in one statement when their wallets differ: postLedgerEntries), and
   * `finish` says what the event came to from what the posting did. Everything else the handler
   * wrote is already in the unit; a posting that fails rolls the unit back as a throw would.
   */
  | { kind: 'post'; posting: LedgerPosting; finish: (posted: PostLedgerEntryResult) => FinishedResult };

/** A result that finishes the event: what the engine marks (after a `post`, what `finish` said). */
export type FinishedResult = Extract<HandlerResult, { kind: 'processed' | 'ignored' }>;

export const processed = (code: ProcessedOutcomeCode, detail: string): FinishedResult => ({
  kind: 'processed',
  code,
  detail,
});
export const ignored = (code: IgnoredOutcomeCode, detail: string): FinishedResult => ({
  kind: 'ignored',
  code,
  detail,
});
export const postThen = (
  posting: LedgerPosting,
  finish: (posted: PostLedgerEntryResult) => FinishedResult,
): HandlerResult => ({ kind: 'post', posting, finish });
export const retryLater = (reason: string, delayMs?: number): HandlerResult =>
  delayMs === undefined ? { kind: 'retry-later', reason } : { kind: 'retry-later', reason, delayMs };

export interface HandlerContext {
  clock: Clock;
}

/**
 * One provider's handler, split in two so that provider reads never run inside a transaction:
 * `prepare` may call external APIs (outside any transaction) and returns what `apply` needs;
 * `apply` writes every effect inside the unit of work whose transaction also marks the row
 * finished (the unit's clock is the context's clock). Both
 * must be safe to run again for the same row. Either may throw RetryLaterError.
 */
export interface InboxHandler<Prepared = unknown> {
  prepare(row: InboxEventRow, ctx: HandlerContext): Promise<Prepared>;
  /**
   * What `prepare` would return, when getting it needs no external call (no provider read):
   * `{ prepared }`; otherwise `undefined`. Lets the engine run such an event's first attempt as
   * one transaction (see processInboxEvents). Synchronous on purpose: it runs inside that
   * transaction, so it must not wait on anything. Leave it out to always prepare outside.
   */
  prepareWithoutIo?(row: InboxEventRow, ctx: HandlerContext): { prepared: Prepared } | undefined;
  apply(uow: UnitOfWork, row: InboxEventRow, prepared: Prepared): Promise<HandlerResult>;
  /**
   * True when `apply` for this event reads nothing a ledger posting writes (ledger entries,
   * wallets, lots, app webhook messages) and writes nothing whose order against a posting matters,
   * so it may run while the postings earlier events of its batch handed over (`post`) are still
   * pending. Otherwise (or left out) the engine makes those postings first: every apply sees the
   * effects of the events before it, as if each had posted at once.
   */
  runsAheadOfPostings?(prepared: Prepared): boolean;
}

export type InboxHandlers = Record<Provider, InboxHandler<unknown>>;
