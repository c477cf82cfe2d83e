import { commitWith, rollbackWith, type TransactionDecision } from '@tally/platform/db';
import type { Kysely, Transaction } from 'kysely';
import { type Clock, systemClock } from '../clock';
import type { DB, InboxEventRow } from '../db/schema';
import { ERROR_TEXT_MAX_LENGTH, isRetryable, RetryLaterError, toErrorText } from '../errors';
import { type PostLedgerEntryResult, postLedgerEntries, postLedgerEntry } from '../ledger/post-ledger-entry';
import { type BackoffSettings, computeBackoffDelayMs } from '../scheduling/backoff';
import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';
import { runInUnitOfWork, type UnitOfWork } from '../unit-of-work/unit-of-work';
import { lockUsers, UserLockOrderError } from '../users/lock-user';
import type { FinishedResult, HandlerContext, HandlerResult, InboxHandlers } from './inbox-handler';
import {
  claimInboxEvent,
  deferInboxEvent,
  type FinishedColumns,
  lockUserAndInboxEvent,
  lockUserAndReadInboxEvent,
  lockUsersAndReadInboxEvents,
  markInboxEventFinished,
  markInboxEventsFinished,
  readInboxEventStatus,
  recordInboxEventFailure,
} from './inbox-transitions';
import {
  type IgnoredOutcomeCode,
  type ParkedOutcomeCode,
  type ProcessedOutcomeCode,
  parkedOutcomeCodeOf,
} from './outcome-codes';
import { type JobFacts, planAttempt } from './plan-attempt';

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
       * How the attempt ran: the one transaction alone (`one-transaction`) or shared with other
       * events' first runs (`batch`), or claimed first (`claimed`).
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

type FinishedAttempt = Extract<ProcessInboxEventResult, { kind: 'processed' | 'ignored' }>;

/** The deps and the handlers' context of one call, built once. */
interface Engine extends InboxProcessorDeps {
  ctx: HandlerContext;
}

/**
 * Processes inbox rows: the engine's one entry point (a single event is a batch of one), safe to
 * call concurrently from any replica; results come back in the order of `inboxEventIds`. It runs
 * the plan planAttempt makes of `facts` (one transaction for a first run, else the claimed
 * attempt) and records each outcome (docs/engine.md#one-attempt-path); the locks and conditional
 * updates are in inbox-transitions.ts. Throws only when the database itself fails.
 */
export async function processInboxEvents(
  deps: InboxProcessorDeps,
  inboxEventIds: readonly number[],
  facts: JobFacts,
): Promise<ProcessInboxEventResult[]> {
  const engine: Engine = { ...deps, ctx: { clock: deps.clock ?? systemClock } };
  const unique = [...new Set(inboxEventIds)];
  const results =
    planAttempt(facts, 'unread') === 'claim'
      ? await Promise.all(unique.map((id) => runClaimedAttempt(engine, id)))
      : await runFirstAttempts(engine, facts, unique);
  const byId = new Map(unique.map((id, index) => [id, results[index] as ProcessInboxEventResult]));
  // An id given twice: its second occurrence finds the row as the first left it.
  const seen = new Set<number>();
  return Promise.all(
    inboxEventIds.map((id) => {
      if (seen.has(id)) return runClaimedAttempt(engine, id);
      seen.add(id);
      return byId.get(id) as ProcessInboxEventResult;
    }),
  );
}

/** First runs of distinct events: the one transaction, then what its outcome calls for. */
async function runFirstAttempts(
  engine: Engine,
  facts: JobFacts,
  ids: readonly number[],
): Promise<ProcessInboxEventResult[]> {
  if (ids.length === 0) return [];
  const together = await attemptTogether(engine, facts, ids);
  if (together.kind === 'applied') {
    const { finished } = together;
    return Promise.all(ids.map((id) => finished.get(id) ?? runClaimedAttempt(engine, id)));
  }
  // Several: each runs again as a batch of one, as if the batch had never been tried.
  if (ids.length > 1) return (await Promise.all(ids.map((id) => runFirstAttempts(engine, facts, [id])))).flat();
  return [await afterRollback(engine, ids[0] as number, together.cause)];
}

/**
 * What the one transaction came to: `applied`, the rows it applied and marked, committed (none:
 * nothing was written), the other rows claim; or `rolled-back`, with why.
 */
type Together =
  | { kind: 'applied'; finished: Map<number, FinishedAttempt> }
  | { kind: 'rolled-back'; cause: RollbackCause };

/** Why the one transaction rolled back, as a batch of one records it. */
type RollbackCause =
  /** Nothing of the event's own went wrong (a mark that did not hold, a lock out of order, no read): claim. */
  | { kind: 'claim' }
  /** The handler asked to wait; its effects were rolled back. */
  | { kind: 'retry-later'; row: InboxEventRow; error: RetryLaterError }
  /** The handler failed; its effects were rolled back. */
  | { kind: 'failed'; row: InboxEventRow; error: unknown };

const claim: RollbackCause = { kind: 'claim' };

/** The one transaction of first runs (see processInboxEvents). */
async function attemptTogether(engine: Engine, facts: JobFacts, ids: readonly number[]): Promise<Together> {
  let applying: InboxEventRow | undefined;
  try {
    return await runInUnitOfWork(
      { db: engine.db, outbox: engine.outbox, clock: engine.ctx.clock },
      async (uow): Promise<TransactionDecision<Together>> => {
        const handled: { row: InboxEventRow; result: FinishedResult | PostResult }[] = [];
        for (const row of await readTogether(uow.trx, ids)) {
          if (planAttempt(facts, row) !== 'one-transaction') continue;
          const handler = engine.handlers[row.provider];
          applying = row;
          const local = handler.prepareWithoutIo?.(row, engine.ctx);
          if (!local) continue;
          // An apply that may read what a pending posting writes sees it made first.
          // guard: inbox-postings-before-apply
          if (!handler.runsAheadOfPostings?.(local.prepared)) await postPending(uow, handled);
          // guard: batch-apply-failure-rollback
          const result = await handler.apply(uow, row, local.prepared);
          if (result.kind === 'retry-later') {
            const error = new RetryLaterError(result.reason, { delayMs: result.delayMs });
            // guard: retry-later-rollback-first-run
            return rollbackWith({ kind: 'rolled-back', cause: { kind: 'retry-later', row, error } });
          }
          handled.push({ row, result });
        }
        if (handled.length === 0) return rollbackWith({ kind: 'applied', finished: new Map() });
        // The postings still pending; one that throws is charged to `applying` in a batch of one.
        const applied = await postPending(uow, handled);
        const marked = await markTogether(uow.trx, applied);
        // A row another run claimed after our read: undo everything.
        if (marked.size !== applied.length) return rollbackWith({ kind: 'rolled-back', cause: claim });
        const path = ids.length === 1 ? 'one-transaction' : 'batch';
        const finished = new Map<number, FinishedAttempt>();
        for (const { row, result } of applied) {
          const { kind, code, detail } = result;
          finished.set(row.id, { kind, row: { ...row, ...marked.get(row.id) }, code, detail, path });
        }
        return commitWith({ kind: 'applied', finished });
      },
    );
  } catch (error) {
    // Before any apply (the read, a lock) or a user lock out of order held elsewhere: the claimed
    // attempt takes them all in order.
    if (applying === undefined || error instanceof UserLockOrderError) return { kind: 'rolled-back', cause: claim };
    if (error instanceof RetryLaterError)
      return { kind: 'rolled-back', cause: { kind: 'retry-later', row: applying, error } };
    return { kind: 'rolled-back', cause: { kind: 'failed', row: applying, error } };
  }
}

type PostResult = Extract<HandlerResult, { kind: 'post' }>;

/**
 * Makes the postings handlers handed over and not made yet, together (postLedgerEntries: one
 * statement for those on distinct wallets, each wallet's in the rows' order), and puts each
 * row's finished result (its `finish` of what its posting did) in its place. Returns the rows.
 */
async function postPending(
  uow: UnitOfWork,
  handled: { row: InboxEventRow; result: FinishedResult | PostResult }[],
): Promise<{ row: InboxEventRow; result: FinishedResult }[]> {
  const pending = handled.filter(
    (item): item is { row: InboxEventRow; result: PostResult } => item.result.kind === 'post',
  );
  if (pending.length > 0) {
    // guard: inbox-batch-postings
    const posted = await postLedgerEntries(
      uow,
      pending.map(({ result }) => result.posting),
    );
    pending.forEach((item, index) => {
      (item as { result: FinishedResult | PostResult }).result = item.result.finish(
        posted[index] as PostLedgerEntryResult,
      );
    });
  }
  return handled as { row: InboxEventRow; result: FinishedResult }[];
}

/** A handler's result for one event made final: its posting, if it handed one over, made now. */
async function settle(uow: UnitOfWork, result: FinishedResult | PostResult): Promise<FinishedResult> {
  if (result.kind !== 'post') return result;
  return result.finish(await postLedgerEntry(uow, result.posting));
}

/** The rows with their users locked: one event's user alone, or a batch's users in key order. */
async function readTogether(trx: Transaction<DB>, ids: readonly number[]): Promise<InboxEventRow[]> {
  if (ids.length !== 1) return lockUsersAndReadInboxEvents(trx, ids);
  const row = await lockUserAndReadInboxEvent(trx, ids[0] as number);
  return row === undefined ? [] : [row];
}

/** The applied rows marked finished (only those still `received` with no attempt spent). */
async function markTogether(
  trx: Transaction<DB>,
  applied: readonly { row: InboxEventRow; result: FinishedResult }[],
): Promise<Map<number, FinishedColumns>> {
  const [only] = applied;
  if (applied.length !== 1 || only === undefined) {
    return markInboxEventsFinished(
      trx,
      applied.map(({ row, result }) => ({ inboxEventId: row.id, result })),
    );
  }
  const finished = await markInboxEventFinished(trx, only.row.id, only.result, 'first-attempt');
  return finished === undefined ? new Map() : new Map([[only.row.id, finished]]);
}

/** A batch of one rolled back: recorded exactly as a claimed attempt's outcome would be. */
function afterRollback(engine: Engine, id: number, cause: RollbackCause): Promise<ProcessInboxEventResult> {
  switch (cause.kind) {
    case 'claim':
      return runClaimedAttempt(engine, id);
    case 'retry-later':
      return recordDeferral(engine, cause.row, cause.error);
    case 'failed':
      // The attempt ran and failed: count it, as the claim would have.
      return recordFailure(engine, { ...cause.row, attempts: cause.row.attempts + 1 }, cause.error, {
        countAttempt: true,
      });
    default: {
      const exhaustive: never = cause;
      throw new Error(`unhandled rollback ${JSON.stringify(exhaustive)}`);
    }
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

/** The claimed attempt (see processInboxEvents): claim, prepare outside any transaction, apply. */
async function runClaimedAttempt(engine: Engine, inboxEventId: number): Promise<ProcessInboxEventResult> {
  const { db, ctx } = engine;
  const claimed = await claimInboxEvent(db, inboxEventId, engine.maxAttempts);
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

  const handler = engine.handlers[claimed.provider];
  let applied: ClaimedApply;
  try {
    const prepared = await handler.prepare(claimed, ctx);
    // The users a pass's handler needed out of order (UserLockOrderError): the next pass takes
    // them with the event's user first, in the one order, and so waits for them instead.
    let alsoLock: readonly string[] = [];
    const apply = () =>
      runInUnitOfWork(
        { db, outbox: engine.outbox, clock: ctx.clock },
        async (uow): Promise<TransactionDecision<ClaimedApply>> => {
          const { trx } = uow;
          if (alsoLock.length > 0)
            await lockUsers(trx, [...(claimed.user_id === null ? [] : [claimed.user_id]), ...alsoLock]);
          const row = await lockUserAndInboxEvent(trx, inboxEventId, claimed.user_id);
          if (row.status !== 'processing' && row.status !== 'received') {
            return rollbackWith({ kind: 'skipped', status: row.status });
          }
          const handled = await handler.apply(uow, claimed, prepared);
          // "Retry later" from apply must leave no effect behind: roll the transaction back.
          if (handled.kind === 'retry-later') {
            // guard: retry-later-rollback-claimed
            return rollbackWith({
              kind: 'retry-later',
              error: new RetryLaterError(handled.reason, { delayMs: handled.delayMs }),
            });
          }
          const result = await settle(uow, handled);
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
        // guard: lock-order-retry
        if (!(error instanceof UserLockOrderError) || pass >= maxLockOrderPasses) throw error;
        alsoLock = [...new Set([...alsoLock, ...error.userIds])];
      }
    }
  } catch (error) {
    if (error instanceof RetryLaterError) return recordDeferral(engine, claimed, error);
    return recordFailure(engine, claimed, error, { countAttempt: false });
  }
  return applied.kind === 'retry-later' ? recordDeferral(engine, claimed, applied.error) : applied;
}

/** "Retry later": the handler's delay or a growing default; parked past the maximum wait. */
async function recordDeferral(
  engine: Engine,
  claimed: InboxEventRow,
  error: RetryLaterError,
): Promise<ProcessInboxEventResult> {
  const settings = engine.retryLater;
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
  const row = await deferInboxEvent(engine.db, claimed.id, { reason, delayMs, maxWaitMs: settings.maxWaitMs });
  if (!row) return currentStatus(engine.db, claimed.id);
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
  engine: Engine,
  claimed: InboxEventRow,
  error: unknown,
  /** `countAttempt`: the attempt was not claimed (the one transaction); the update counts it. */
  { countAttempt }: { countAttempt: boolean },
): Promise<ProcessInboxEventResult> {
  const { maxAttempts } = engine;
  const retryable = isRetryable(error);
  const parkedCode: ParkedOutcomeCode | null = !retryable
    ? parkedOutcomeCodeOf(error)
    : claimed.attempts >= maxAttempts
      ? 'attempts_exhausted'
      : null;
  const park = parkedCode !== null;
  const delayMs = park ? 0 : computeBackoffDelayMs(claimed.attempts, engine.backoff);
  const errorText = toErrorText(error);
  const row = await recordInboxEventFailure(
    engine.db,
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
  if (!row) return currentStatus(engine.db, claimed.id);
  return { kind: 'failed', error, row, parked: park, delayMs, retryable, code: parkedCode ?? 'error' };
}

async function currentStatus(db: Kysely<DB>, inboxEventId: number): Promise<ProcessInboxEventResult> {
  const status = await readInboxEventStatus(db, inboxEventId);
  return status === undefined ? { kind: 'not-found' } : { kind: 'skipped', status };
}
