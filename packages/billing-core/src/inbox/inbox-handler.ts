import type { Clock } from '../clock';
import type { InboxEventRow, Provider } from '../db/schema';
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
  | { kind: 'retry-later'; reason: string; delayMs?: number };

export const processed = (code: ProcessedOutcomeCode, detail: string): HandlerResult => ({
  kind: 'processed',
  code,
  detail,
});
export const ignored = (code: IgnoredOutcomeCode, detail: string): HandlerResult => ({ kind: 'ignored', code, detail });
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
   * one transaction (see processInboxEvent). Synchronous on purpose: it runs inside that
   * transaction, so it must not wait on anything. Leave it out to always prepare outside.
   */
  prepareWithoutIo?(row: InboxEventRow, ctx: HandlerContext): { prepared: Prepared } | undefined;
  apply(uow: UnitOfWork, row: InboxEventRow, prepared: Prepared): Promise<HandlerResult>;
}

export type InboxHandlers = Record<Provider, InboxHandler<unknown>>;
