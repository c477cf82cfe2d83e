import { type Kysely, sql, type Transaction } from 'kysely';
import { type Clock, systemClock } from '../clock';
import type { DB, InboxEventRow } from '../db/schema';
import { BillingError, isRetryable, RetryLaterError } from '../errors';
import { type BackoffSettings, computeBackoffDelayMs } from '../scheduling/backoff';
import type { HandlerContext, HandlerResult, InboxHandlers } from './inbox-handler';

export const DEFAULT_MAX_ATTEMPTS = 15;
export const DEFAULT_FAILURE_BACKOFF: BackoffSettings = { baseDelayMs: 5_000, maxDelayMs: 30 * 60_000 };
export const DEFAULT_RETRY_LATER: RetryLaterSettings = {
  baseDelayMs: 10_000,
  maxDelayMs: 10 * 60_000,
  maxWaitMs: 24 * 3600_000,
};
const MAX_ERROR_LENGTH = 2_000;
// Namespace for per-user advisory locks (pg_advisory_xact_lock(namespace, hashtext(user))).
export const USER_LOCK_NAMESPACE = 7_411_001;

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
  clock?: Clock;
  /** A row is parked (status `failed`) once this many attempts have started and not succeeded. */
  maxAttempts?: number;
  /** Delay before the next attempt after a failure. */
  backoff?: BackoffSettings;
  retryLater?: RetryLaterSettings;
}

export type ProcessInboxEventResult =
  | {
      kind: 'processed' | 'ignored';
      row: InboxEventRow;
      code: string;
      detail: string;
      /** How the attempt ran: one transaction (a first run needing no read) or claimed first. */
      path: 'one-transaction' | 'claimed';
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
      code: string;
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
 * attempt spent (the mark is conditional); anything else (a read is needed, the handler fails or
 * asks to wait, another run got there) rolls back without a trace and the claimed path above
 * runs. Poison events stay bounded: a worker that dies inside that transaction leaves no
 * attempt counted, but its job then re-runs as a stalled job (not a first run), which claims.
 */
export async function processInboxEvent(
  deps: InboxProcessorDeps,
  inboxEventId: number,
  options: ProcessInboxEventOptions = {},
): Promise<ProcessInboxEventResult> {
  const { db } = deps;
  const maxAttempts = deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (options.firstRun) {
    const done = await applyFirstAttemptInOneTransaction(deps, inboxEventId, maxAttempts);
    if (done) return done;
  }
  const claimed = await claimInboxEvent(db, inboxEventId, maxAttempts);
  if (!claimed) {
    const row = await db.selectFrom('inbox_events').select('status').where('id', '=', inboxEventId).executeTakeFirst();
    return row ? { kind: 'skipped', status: row.status } : { kind: 'not-found' };
  }
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
  try {
    const prepared = await handler.prepare(claimed, ctx);
    return await db.transaction().execute(async (trx): Promise<ProcessInboxEventResult> => {
      const row = await lockUserAndRow(trx, inboxEventId, claimed.user_id);
      if (row.status !== 'processing' && row.status !== 'received') return { kind: 'skipped', status: row.status };
      const result = await handler.apply(trx, claimed, prepared, ctx);
      // "Retry later" from apply must leave no effect behind: throwing rolls the transaction back.
      if (result.kind === 'retry-later') throw new RetryLaterError(result.reason, { delayMs: result.delayMs });
      const finished = await markFinished(trx, inboxEventId, result, 'claimed');
      if (!finished) throw new Error(`inbox event ${inboxEventId} changed under its row lock`);
      return {
        kind: result.kind,
        row: { ...claimed, ...finished },
        code: result.code,
        detail: result.detail,
        path: 'claimed',
      };
    });
  } catch (error) {
    if (error instanceof RetryLaterError) return deferInboxEvent(deps, claimed, error);
    return recordInboxFailure(deps, claimed, error, maxAttempts);
  }
}

export interface ProcessInboxEventOptions {
  /**
   * The job carrying this event has never started before (BullMQ attemptsStarted 1, never
   * stalled): the one-transaction first attempt may be tried. Must be false for any re-run.
   */
  firstRun?: boolean;
}

type FinishedResult = Extract<HandlerResult, { kind: 'processed' | 'ignored' }>;
type FinishedColumns = Pick<
  InboxEventRow,
  | 'status'
  | 'attempts'
  | 'outcome_code'
  | 'outcome_detail'
  | 'last_error'
  | 'next_attempt_at'
  | 'waiting_since'
  | 'processed_at'
  | 'updated_at'
>;

/** Thrown inside the one-transaction attempt to roll it back and take the claimed path. */
class TakeClaimedPath extends Error {}

/**
 * The one-transaction first attempt (see processInboxEvent). Undefined: nothing was written,
 * run the claimed path. A handler that fails or asks to wait has its effects rolled back, and
 * the attempt is then recorded exactly as a claimed one would be (counted, for a failure).
 */
async function applyFirstAttemptInOneTransaction(
  deps: InboxProcessorDeps,
  inboxEventId: number,
  maxAttempts: number,
): Promise<ProcessInboxEventResult | undefined> {
  const ctx: HandlerContext = { clock: deps.clock ?? systemClock };
  let read: InboxEventRow | undefined;
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const row = await lockUserAndReadRow(trx, inboxEventId);
      if (row?.status !== 'received' || row.attempts !== 0) return undefined;
      const handler = deps.handlers[row.provider];
      read = row;
      const local = handler.prepareWithoutIo?.(row, ctx);
      if (!local) return undefined;
      const result = await handler.apply(trx, row, local.prepared, ctx);
      if (result.kind === 'retry-later') throw new RetryLaterError(result.reason, { delayMs: result.delayMs });
      const finished = await markFinished(trx, inboxEventId, result, 'first-attempt');
      // Another run claimed the row after our read: undo everything, the claimed path decides.
      if (!finished) throw new TakeClaimedPath();
      return {
        kind: result.kind,
        row: { ...row, ...finished },
        code: result.code,
        detail: result.detail,
        path: 'one-transaction' as const,
      };
    });
  } catch (error) {
    if (error instanceof TakeClaimedPath || read === undefined) return undefined;
    if (error instanceof RetryLaterError) return deferInboxEvent(deps, read, error);
    // The attempt ran and failed: count it, as the claim would have.
    return recordInboxFailure(deps, { ...read, attempts: read.attempts + 1 }, error, maxAttempts, 'count');
  }
}

/**
 * Marks the row finished, in the transaction that applied its effects. `claimed`: the row is
 * ours (locked, claimed by this run). `first-attempt`: only a row still `received` with no attempt
 * spent, and the attempt is counted here. Undefined when the condition did not hold.
 */
async function markFinished(
  trx: Transaction<DB>,
  inboxEventId: number,
  result: FinishedResult,
  mode: 'claimed' | 'first-attempt',
): Promise<FinishedColumns | undefined> {
  // A template rather than the query builder: this runs once per event on the hot path.
  const firstAttempt = mode === 'first-attempt';
  const rows = await sql<FinishedColumns>`
    UPDATE inbox_events SET
      status = ${result.kind},
      outcome_code = ${result.code},
      outcome_detail = ${result.detail},
      last_error = NULL,
      next_attempt_at = NULL,
      waiting_since = NULL,
      processed_at = now(),
      updated_at = now(),
      attempts = CASE WHEN ${firstAttempt} THEN attempts + 1 ELSE attempts END
    WHERE id = ${inboxEventId}
      AND (NOT ${firstAttempt} OR (status = 'received' AND attempts = 0))
    RETURNING status, attempts, outcome_code, outcome_detail, last_error, next_attempt_at,
              waiting_since, processed_at, updated_at`.execute(trx);
  // Not the raw body again: the caller already holds the row.
  return rows.rows[0];
}

/**
 * The one-transaction attempt's first statement: the user's advisory lock (the user read from the
 * row itself: user_id never changes after insert), then the whole row. No row lock: the final
 * mark is conditional instead, so an attempt that turns out to need the claimed path writes
 * nothing at all.
 */
async function lockUserAndReadRow(trx: Transaction<DB>, inboxEventId: number): Promise<InboxEventRow | undefined> {
  const rows = await sql<InboxEventRow>`
    WITH user_lock AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(user_id))
        FROM inbox_events WHERE id = ${inboxEventId} AND user_id IS NOT NULL)
    SELECT * FROM inbox_events
     WHERE id = ${inboxEventId} AND (SELECT count(*) FROM user_lock) >= 0`.execute(trx);
  return rows.rows[0];
}

/**
 * In one round trip: the user's advisory lock (events of one user apply one at a time, different
 * users in parallel), then the row lock. The lock is a one-time filter evaluated before the scan,
 * so every transaction takes the two in the same order (user, then row) and cannot deadlock.
 */
async function lockUserAndRow(
  trx: Transaction<DB>,
  inboxEventId: number,
  userId: string | null,
): Promise<{ status: InboxEventRow['status'] }> {
  const rows = await sql<{ status: InboxEventRow['status'] }>`
    WITH user_lock AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(${userId}::text)) WHERE ${userId}::text IS NOT NULL)
    SELECT status FROM inbox_events
     WHERE id = ${inboxEventId} AND (SELECT count(*) FROM user_lock) >= 0
       FOR UPDATE`.execute(trx);
  const row = rows.rows[0];
  if (!row) throw new Error(`inbox event ${inboxEventId} disappeared`);
  return row;
}

/**
 * received/processing → processing with attempts + 1. A row whose budget is already spent (its
 * last attempts died without recording anything) is parked instead, in the same statement.
 */
async function claimInboxEvent(
  db: Kysely<DB>,
  inboxEventId: number,
  maxAttempts: number,
): Promise<InboxEventRow | undefined> {
  const exhausted = sql<boolean>`attempts >= ${maxAttempts}`;
  const rows = await sql<InboxEventRow>`
    UPDATE inbox_events SET
      status = CASE WHEN ${exhausted} THEN 'failed' ELSE 'processing' END,
      attempts = CASE WHEN ${exhausted} THEN attempts ELSE attempts + 1 END,
      outcome_code = CASE WHEN ${exhausted} THEN 'attempts_exhausted' ELSE outcome_code END,
      last_error = CASE WHEN ${exhausted}
        THEN left('attempts exhausted: the worker stopped during the last attempt (crash or kill) without recording an outcome; last error: '
                  || coalesce(last_error, 'none'), ${MAX_ERROR_LENGTH})
        ELSE last_error END,
      next_attempt_at = NULL,
      updated_at = now()
    WHERE id = ${inboxEventId} AND status IN ('received', 'processing')
    RETURNING *`.execute(db);
  return rows.rows[0];
}

/** Truncated, single-line error text for the row; never includes a stack. */
export function toErrorText(error: unknown): string {
  const raw = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // Postgres text cannot hold NUL, and control characters break log lines: an error quoting a
  // hostile id must still be recordable, or the failure itself could not be written.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const text = raw.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '\ufffd');
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

async function deferInboxEvent(
  deps: InboxProcessorDeps,
  claimed: InboxEventRow,
  error: RetryLaterError,
): Promise<ProcessInboxEventResult> {
  const settings = deps.retryLater ?? DEFAULT_RETRY_LATER;
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
  const overdue = sql<boolean>`(waiting_since IS NOT NULL AND waiting_since <= now() - make_interval(secs => ${settings.maxWaitMs / 1000}))`;
  const reason = error.message.slice(0, MAX_ERROR_LENGTH);
  const rows = await sql<InboxEventRow>`
    UPDATE inbox_events SET
      status = CASE WHEN ${overdue} THEN 'failed' ELSE 'received' END,
      attempts = greatest(attempts - 1, 0),
      deferrals = deferrals + 1,
      waiting_since = coalesce(waiting_since, now()),
      outcome_code = CASE WHEN ${overdue} THEN 'waited_too_long' ELSE 'waiting' END,
      outcome_detail = ${reason},
      last_error = CASE WHEN ${overdue}
        THEN left('waited since ' || waiting_since::text || ' for: ' || ${reason}, ${MAX_ERROR_LENGTH})
        ELSE last_error END,
      next_attempt_at = CASE WHEN ${overdue} THEN NULL ELSE now() + make_interval(secs => ${delayMs / 1000}) END,
      enqueued_at = now(),
      updated_at = now()
    WHERE id = ${claimed.id} AND status IN ('received', 'processing')
    RETURNING *`.execute(deps.db);
  const row = rows.rows[0];
  if (!row) return currentStatus(deps.db, claimed.id);
  if (row.status === 'failed') {
    return { kind: 'failed', error, row, parked: true, delayMs: 0, retryable: false, code: 'waited_too_long' };
  }
  return { kind: 'deferred', row, reason, delayMs };
}

async function recordInboxFailure(
  deps: InboxProcessorDeps,
  claimed: InboxEventRow,
  error: unknown,
  maxAttempts: number,
  /** `count`: the attempt was not claimed (one-transaction path); the update counts it. */
  attempt: 'claimed' | 'count' = 'claimed',
): Promise<ProcessInboxEventResult> {
  const retryable = isRetryable(error);
  const park = !retryable || claimed.attempts >= maxAttempts;
  const code = !retryable && error instanceof BillingError ? error.code : park ? 'attempts_exhausted' : 'error';
  const delayMs = park ? 0 : computeBackoffDelayMs(claimed.attempts, deps.backoff ?? DEFAULT_FAILURE_BACKOFF);
  const row = await deps.db
    .updateTable('inbox_events')
    .set({
      last_error: toErrorText(error),
      status: park ? 'failed' : 'received',
      outcome_code: park ? code : 'retrying',
      outcome_detail: park ? null : `attempt ${claimed.attempts} of ${maxAttempts} failed`,
      next_attempt_at: park ? null : sql`now() + make_interval(secs => ${delayMs / 1000})`,
      enqueued_at: sql`now()`,
      updated_at: sql`now()`,
      ...(attempt === 'count' ? { attempts: sql<number>`attempts + 1` } : {}),
    })
    .where('id', '=', claimed.id)
    .where('status', 'in', ['received', 'processing'])
    .returningAll()
    .executeTakeFirst();
  // A concurrent run finished the row while this one failed: nothing to retry.
  if (!row) return currentStatus(deps.db, claimed.id);
  return { kind: 'failed', error, row, parked: park, delayMs, retryable, code };
}

async function currentStatus(db: Kysely<DB>, inboxEventId: number): Promise<ProcessInboxEventResult> {
  const current = await db
    .selectFrom('inbox_events')
    .select('status')
    .where('id', '=', inboxEventId)
    .executeTakeFirst();
  return current ? { kind: 'skipped', status: current.status } : { kind: 'not-found' };
}
