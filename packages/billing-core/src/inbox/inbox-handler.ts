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
   * The event's effects end with one ledger posting, handed over instead of made: it is posted in
   * the same unit of work before the event is marked (the ledger groups a unit's pending postings:
   * ledger/pending-postings.ts), and `finish` says what the event came to from the posting's
   * answer. Everything else the handler wrote is already in the unit; a posting that fails rolls
   * the unit back as a throw would.
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
 * What `prepare` found. `ready`: what apply needs is in hand (no provider read), so the event's
 * first run may be applied inside the transaction that reads it. `read`: apply needs a provider
 * read first; the engine claims the event, then runs `read` outside any transaction.
 */
export type Preparation<Prepared> = (
  | { kind: 'ready'; prepared: Prepared }
  | { kind: 'read'; read: () => Promise<Prepared> }
) & {
  /**
   * Whether apply may read or write what a ledger posting writes (ledger entries, wallets, lots,
   * app webhook messages) other than through the posting it hands over. When true, every posting
   * handed over before it in the unit is made first, so apply sees the events before it as if
   * each had posted at once; false only for an apply that reads its own fences and hands its
   * posting over.
   */
  touchesLedger: boolean;
};

/**
 * One provider's handler, split in two so that provider reads never run inside a transaction:
 * `prepare` is pure (parse, policy, which route) and says whether a provider read is needed
 * (Preparation); `apply` writes every effect inside the unit of work whose transaction also marks
 * the row finished (the unit's clock is the context's clock). Both must be safe to run again for
 * the same row. Either (and `read`) may throw RetryLaterError.
 */
export interface InboxHandler<Prepared = unknown> {
  prepare(row: InboxEventRow, ctx: HandlerContext): Preparation<Prepared>;
  apply(uow: UnitOfWork, row: InboxEventRow, prepared: Prepared): Promise<HandlerResult>;
}

export type InboxHandlers = Record<Provider, InboxHandler<unknown>>;
