import type { Kysely } from 'kysely';
import { type Clock, systemClock } from '../clock';
import { commitWith, rollbackWith, type TransactionDecision } from '../db/run-in-transaction';
import type { DB, InboxEventRow } from '../db/schema';
import { ERROR_TEXT_MAX_LENGTH, isRetryable, RetryLaterError, toErrorText } from '../errors';
import type { AppWebhookOutbox } from '../outbox/app-webhook-outbox';
import { type BackoffSettings, computeBackoffDelayMs } from '../scheduling/backoff';
import { runInUnitOfWork } from '../unit-of-work/unit-of-work';
import { lockUsers, UserLockOrderError } from '../users/lock-user';
import type { HandlerContext, InboxHandlers } from './inbox-handler';
import {
  claimInboxEvent,
  deferInboxEvent,
  lockUserAndInboxEvent,
  lockUserAndReadInboxEvent,
  markInboxEventFinished,
  readInboxEventStatus,
  recordInboxEventFailure,
} from './inbox-transitions';
import {
  type IgnoredOutcomeCode,
  type ParkedOutcomeCode,
  type ProcessedOutcomeCode,
  parkedOutcomeCodeOf,
} from './outcome-codes';

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
       * How the attempt ran: one transaction (a first run needing no read), in one transaction
       * with other events' first runs (processInboxEventBatch), or claimed first.
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

/**
 * Processes one inbox row. Safe to call any number of times, concurrently, from any replica.
 *
 * Order: claim the row (received → processing, attempts + 1: an attempt counts when it starts,
 * so an event that crashes or kills its worker still spends its budget and parks after the cap),
 * run the handler's provider reads outside any transaction, then in one transaction take the
 * user's advisory lock (events of one user apply one at a time), lock the row, re-check it is
 * still unfinished, apply the effects and mark it finished. Effects and the mark commit together.
 * Money effects are additionally fenced by ledger references.
 *
 * Outcomes: finished (processed/ignored with a code); deferred ("retry later": the attempt is
 * given back, next_attempt_at set, parked as `waited_too_long` past the maximum wait); failed
 * (error kept, next_attempt_at after backoff; parked at once for a non-retryable error or when
 * the budget is spent). The row carries the schedule; the caller only delays its job to match.
 * Never throws for a handler failure; throws only when the database itself fails.
 *
 * `firstRun` (the caller's job has never started before: not a retry, not a stalled re-run)
 * first tries the whole first attempt as ONE transaction when the handler needs no provider
 * read (prepareWithoutIo): user lock, read the row, apply, mark finished with attempts + 1 —
 * one commit and one row version instead of two. It commits only a row still `received` with no
 * attempt spent (the mark is conditional); when a read is needed or another run got there, it
 * rolls back without a trace and the claimed path above runs; a handler that fails or asks to
 * wait is rolled back and recorded as a claimed attempt would be. Poison events stay bounded: a
 * worker that dies inside that transaction leaves no attempt counted, but its job then re-runs as
 * a stalled job (not a first run), which claims.
 *
 * This module decides; the locks and the conditional updates are in inbox-transitions.ts.
 */
export async function processInboxEvent(
  deps: InboxProcessorDeps,
  inboxEventId: number,
  options: ProcessInboxEventOptions = {},
): Promise<ProcessInboxEventResult> {
  const { maxAttempts } = deps;
  if (options.firstRun) {
    const attempt = await attemptInOneTransaction(deps, inboxEventId);
    switch (attempt.kind) {
      case 'finished':
        return attempt.result;
      case 'retry-later':
        return recordDeferral(deps, attempt.row, attempt.error);
      case 'failed':
        // The attempt ran and failed: count it, as the claim would have.
        return recordFailure(deps, { ...attempt.row, attempts: attempt.row.attempts + 1 }, attempt.error, maxAttempts, {
          countAttempt: true,
        });
      case 'take-claimed-path':
        break;
      default: {
        const exhaustive: never = attempt;
        throw new Error(`unhandled first attempt ${JSON.stringify(exhaustive)}`);
      }
    }
  }
  return runClaimedAttempt(deps, inboxEventId, maxAttempts);
}

export interface ProcessInboxEventOptions {
  /**
   * The job carrying this event has never started before (BullMQ attemptsStarted 1, never
   * stalled): the one-transaction first attempt may be tried. Must be false for any re-run.
   */
  firstRun?: boolean;
}

type FinishedAttempt = Extract<ProcessInboxEventResult, { kind: 'processed' | 'ignored' }>;

/** What the one-transaction first attempt came to. Only `finished` committed anything. */
type OneTransactionAttempt =
  | { kind: 'finished'; result: FinishedAttempt }
  /**
   * Nothing was written: the row is not fresh, its handler needs a provider read, another run
   * claimed it after our read, or the lock or the read itself failed. The claimed path decides.
   */
  | { kind: 'take-claimed-path' }
  /** The handler asked to wait; its effects were rolled back. */
  | { kind: 'retry-later'; row: InboxEventRow; error: RetryLaterError }
  /** The handler failed; its effects were rolled back. */
  | { kind: 'failed'; row: InboxEventRow; error: unknown };

const takeClaimedPath: OneTransactionAttempt = { kind: 'take-claimed-path' };

/**
 * The one-transaction first attempt (see processInboxEvent). A handler that fails or asks to wait
 * has its effects rolled back, and the caller then records the attempt exactly as a claimed one
 * would be (counted, for a failure).
 */
async function attemptInOneTransaction(deps: InboxProcessorDeps, inboxEventId: number): Promise<OneTransactionAttempt> {
  const ctx: HandlerContext = { clock: deps.clock ?? systemClock };
  let read: InboxEventRow | undefined;
  try {
    return await runInUnitOfWork(
      { db: deps.db, outbox: deps.outbox, clock: ctx.clock },
      async (uow): Promise<TransactionDecision<OneTransactionAttempt>> => {
        const { trx } = uow;
        const row = await lockUserAndReadInboxEvent(trx, inboxEventId);
        if (row?.status !== 'received' || row.attempts !== 0) return rollbackWith(takeClaimedPath);
        const handler = deps.handlers[row.provider];
        read = row;
        const local = handler.prepareWithoutIo?.(row, ctx);
        if (!local) return rollbackWith(takeClaimedPath);
        const result = await handler.apply(uow, row, local.prepared);
        if (result.kind === 'retry-later') {
          const error = new RetryLaterError(result.reason, { delayMs: result.delayMs });
          return rollbackWith({ kind: 'retry-later', row, error });
        }
        const finished = await markInboxEventFinished(trx, inboxEventId, result, 'first-attempt');
        // Another run claimed the row after our read: undo everything, the claimed path decides.
        if (!finished) return rollbackWith(takeClaimedPath);
        return commitWith({
          kind: 'finished',
          result: {
            kind: result.kind,
            row: { ...row, ...finished },
            code: result.code,
            detail: result.detail,
            path: 'one-transaction',
          },
        });
      },
    );
  } catch (error) {
    if (read === undefined) return takeClaimedPath;
    // A user lock out of order was held elsewhere: the claimed path takes them all in order.
    if (error instanceof UserLockOrderError) return takeClaimedPath;
    if (error instanceof RetryLaterError) return { kind: 'retry-later', row: read, error };
    return { kind: 'failed', row: read, error };
  }
}

/** What the claimed attempt's apply transaction came to; only a finished result committed. */
type ClaimedApply =
  | FinishedAttempt
  | { kind: 'skipped'; status: string }
  | { kind: 'retry-later'; error: RetryLaterError };

/**
 * Passes of a claimed apply whose handler met a user lock out of order: the second takes every
 * user the first asked for up front; a third covers a link made in between. Then the
 * UserLockOrderError (a retry later) defers the event.
 */
const maxLockOrderPasses = 3;

/** The claimed path (see processInboxEvent): claim, prepare outside any transaction, apply. */
async function runClaimedAttempt(
  deps: InboxProcessorDeps,
  inboxEventId: number,
  maxAttempts: number,
): Promise<ProcessInboxEventResult> {
  const { db } = deps;
  const claimed = await claimInboxEvent(db, inboxEventId, maxAttempts);
  if (!claimed) return currentStatus(db, inboxEventId);
  if (claimed.status === 'failed') {
    // The budget was spent by attempts that never recorded an outcome: the worker died each time.
    return {
      kind: 'failed',
      error: new Error(claimed.last_error ?? ''),
      row: claimed,
      parked: true,
      delayMs: 0,
      retryable: false,
      code: 'attempts_exhausted',
    };
  }

  const handler = deps.handlers[claimed.provider];
  const ctx: HandlerContext = { clock: deps.clock ?? systemClock };
  let applied: ClaimedApply;
  try {
    const prepared = await handler.prepare(claimed, ctx);
    // The users a pass's handler needed out of order (UserLockOrderError): the next pass takes
    // them with the event's user first, in the one order, and so waits for them instead.
    let alsoLock: readonly string[] = [];
    const apply = () =>
      runInUnitOfWork(
        { db, outbox: deps.outbox, clock: ctx.clock },
        async (uow): Promise<TransactionDecision<ClaimedApply>> => {
          const { trx } = uow;
          if (alsoLock.length > 0)
            await lockUsers(trx, [...(claimed.user_id === null ? [] : [claimed.user_id]), ...alsoLock]);
          const row = await lockUserAndInboxEvent(trx, inboxEventId, claimed.user_id);
          if (row.status !== 'processing' && row.status !== 'received') {
            return rollbackWith({ kind: 'skipped', status: row.status });
          }
          const result = await handler.apply(uow, claimed, prepared);
          // "Retry later" from apply must leave no effect behind: roll the transaction back.
          if (result.kind === 'retry-later') {
            return rollbackWith({
              kind: 'retry-later',
              error: new RetryLaterError(result.reason, { delayMs: result.delayMs }),
            });
          }
          const finished = await markInboxEventFinished(trx, inboxEventId, result, 'claimed');
          if (!finished) throw new Error(`inbox event ${inboxEventId} changed under its row lock`);
          return commitWith({
            kind: result.kind,
            row: { ...claimed, ...finished },
            code: result.code,
            detail: result.detail,
            path: 'claimed',
          });
        },
      );
    for (let pass = 1; ; pass += 1) {
      try {
        applied = await apply();
        break;
      } catch (error) {
        if (!(error instanceof UserLockOrderError) || pass >= maxLockOrderPasses) throw error;
        alsoLock = [...new Set([...alsoLock, ...error.userIds])];
      }
    }
  } catch (error) {
    if (error instanceof RetryLaterError) return recordDeferral(deps, claimed, error);
    return recordFailure(deps, claimed, error, maxAttempts, { countAttempt: false });
  }
  return applied.kind === 'retry-later' ? recordDeferral(deps, claimed, applied.error) : applied;
}

/** "Retry later": the handler's delay or a growing default; parked past the maximum wait. */
async function recordDeferral(
  deps: InboxProcessorDeps,
  claimed: InboxEventRow,
  error: RetryLaterError,
): Promise<ProcessInboxEventResult> {
  const settings = deps.retryLater;
  const delayMs = Math.max(
    0,
    Math.round(
      error.delayMs ??
        computeBackoffDelayMs(claimed.deferrals + 1, {
          baseDelayMs: settings.baseDelayMs,
          maxDelayMs: settings.maxDelayMs,
        }),
    ),
  );
  const reason = error.message.slice(0, ERROR_TEXT_MAX_LENGTH);
  const row = await deferInboxEvent(deps.db, claimed.id, { reason, delayMs, maxWaitMs: settings.maxWaitMs });
  if (!row) return currentStatus(deps.db, claimed.id);
  if (row.status === 'failed') {
    return { kind: 'failed', error, row, parked: true, delayMs: 0, retryable: false, code: 'waited_too_long' };
  }
  return { kind: 'deferred', row, reason, delayMs };
}

/**
 * A failed attempt: parked at once for a non-retryable error (with its code) or once the budget
 * is spent (`attempts_exhausted`); otherwise due again after the failure backoff.
 */
async function recordFailure(
  deps: InboxProcessorDeps,
  claimed: InboxEventRow,
  error: unknown,
  maxAttempts: number,
  /** `countAttempt`: the attempt was not claimed (one-transaction path); the update counts it. */
  { countAttempt }: { countAttempt: boolean },
): Promise<ProcessInboxEventResult> {
  const retryable = isRetryable(error);
  const parkedCode: ParkedOutcomeCode | null = !retryable
    ? parkedOutcomeCodeOf(error)
    : claimed.attempts >= maxAttempts
      ? 'attempts_exhausted'
      : null;
  const park = parkedCode !== null;
  const delayMs = park ? 0 : computeBackoffDelayMs(claimed.attempts, deps.backoff);
  const errorText = toErrorText(error);
  const row = await recordInboxEventFailure(
    deps.db,
    claimed.id,
    parkedCode !== null
      ? { park: true, errorText, code: parkedCode, countAttempt }
      : {
          park: false,
          errorText,
          delayMs,
          detail: `attempt ${claimed.attempts} of ${maxAttempts} failed`,
          countAttempt,
        },
  );
  // A concurrent run finished the row while this one failed: nothing to retry.
  if (!row) return currentStatus(deps.db, claimed.id);
  return { kind: 'failed', error, row, parked: park, delayMs, retryable, code: parkedCode ?? 'error' };
}

async function currentStatus(db: Kysely<DB>, inboxEventId: number): Promise<ProcessInboxEventResult> {
  const status = await readInboxEventStatus(db, inboxEventId);
  return status === undefined ? { kind: 'not-found' } : { kind: 'skipped', status };
}
