import type { Kysely } from 'kysely';
import type { Clock } from '../clock';
import type { DB, InboxEventRow } from '../db/schema';
import type { BackoffSettings } from '../scheduling/backoff';
import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';
import type { HandlerContext, InboxHandlers } from './inbox-handler';
import type { IgnoredOutcomeCode, ParkedOutcomeCode, ProcessedOutcomeCode } from './outcome-codes';

export interface RetryLaterSettings {
  /** First delay when the handler names none; doubles per deferral up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An event still waiting this long after its first deferral parks (`waited_too_long`). */
  maxWaitMs: number;
}

export interface InboxProcessorDeps {
  db: Kysely<DB>;
  /** Built by the composition root from ports (createInboxHandlers); the engine knows no provider. */
  handlers: InboxHandlers;
  /** The process's app webhook outbox: the effects' messages, handed off right after the commit. */
  outbox: AppWebhookOutbox;
  clock?: Clock;
  /**
   * A row is parked (status `failed`) once this many attempts have started and not succeeded.
   * These settings have no defaults here: the worker's config schema holds them (INBOX_*).
   */
  maxAttempts: number;
  /** Delay before the next attempt after a failure. */
  backoff: BackoffSettings;
  retryLater: RetryLaterSettings;
}

export type ProcessInboxEventResult =
  | {
      kind: 'processed' | 'ignored';
      row: InboxEventRow;
      code: ProcessedOutcomeCode | IgnoredOutcomeCode;
      detail: string;
      /**
       * How the attempt ran: a first run alone (`one-transaction`) or shared with other events'
       * first runs (`batch`), or claimed first (`claimed`).
       */
      path: 'one-transaction' | 'batch' | 'claimed';
    }
  /** The handler said "retry later": scheduled again after delayMs, failure budget intact. */
  | { kind: 'deferred'; row: InboxEventRow; reason: string; delayMs: number }
  /** Nothing to do: the row is finished or parked, or another run finished it first. */
  | { kind: 'skipped'; status: string }
  | { kind: 'not-found' }
  | {
      kind: 'failed';
      error: unknown;
      row: InboxEventRow;
      /** Parked rows stop; others are due again after delayMs. */
      parked: boolean;
      delayMs: number;
      retryable: boolean;
      /** The parked row's outcome code; `error` when not parked (the row then says `retrying`). */
      code: ParkedOutcomeCode | 'error';
    };

export type FinishedAttempt = Extract<ProcessInboxEventResult, { kind: 'processed' | 'ignored' }>;

/** The deps and the handlers' context of one call, built once. */
export interface Engine extends InboxProcessorDeps {
  ctx: HandlerContext;
}
