import { precompiledSql, sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql, type Transaction } from 'kysely';
import { USER_LOCK_NAMESPACE } from '../db/advisory-locks';
import type { DB, InboxEventRow } from '../db/schema';
import { userLocksInKeyOrder } from '../db/user-lock-order';
import { ERROR_TEXT_MAX_LENGTH } from '../errors';
import type { FinishedResult } from './inbox-handler';
import type { ParkedOutcomeCode, ReceivedOutcomeCode } from './outcome-codes';

/**
 * The SQL of the inbox engine (processInboxEvents): the locks it takes and every state transition
 * of an inbox row. Each transition is one conditional UPDATE that moves only an unfinished row
 * (`received` or `processing`) and returns undefined when the condition did not hold (another
 * run got there first); the engine decides what that means. Schedules use the database clock.
 */

export type FinishedColumns = Pick<
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

/**
 * received/processing → processing with attempts + 1. A row whose budget is already spent (its
 * last attempts died without recording anything) is parked instead, in the same statement.
 */
export async function claimInboxEvent(
  db: Kysely<DB>,
  inboxEventId: number,
  maxAttempts: number,
): Promise<InboxEventRow | undefined> {
  const exhausted = sql<boolean>`attempts >= ${maxAttempts}`;
  // guard: attempts-counted-at-claim
  const rows = await sql<InboxEventRow>`
    UPDATE inbox_events SET
      status = CASE WHEN ${exhausted} THEN 'failed' ELSE 'processing' END,
      attempts = CASE WHEN ${exhausted} THEN attempts ELSE attempts + 1 END,
      outcome_code = CASE WHEN ${exhausted} THEN 'attempts_exhausted' ELSE outcome_code END,
      last_error = CASE WHEN ${exhausted}
        THEN left('attempts exhausted: the worker stopped during the last attempt (crash or kill) without recording an outcome; last error: '
                  || coalesce(last_error, 'none'), ${ERROR_TEXT_MAX_LENGTH})
        ELSE last_error END,
      next_attempt_at = NULL,
      updated_at = now()
    WHERE id = ${inboxEventId} AND status IN ('received', 'processing')
    RETURNING *`.execute(db);
  return rows.rows[0];
}

/**
 * A finished row's columns from what its finishing statement returned: only what the statement
 * decided comes back (every column of a result costs the client a field to describe and parse);
 * the rest is what it set. processed_at and updated_at are both now(), the transaction's timestamp.
 */
function finishedColumnsOf(result: FinishedResult, row: { attempts: number; processed_at: Date }): FinishedColumns {
  return {
    status: result.kind,
    attempts: row.attempts,
    outcome_code: result.code,
    outcome_detail: result.detail,
    last_error: null,
    next_attempt_at: null,
    waiting_since: null,
    processed_at: row.processed_at,
    updated_at: new Date(row.processed_at.getTime()),
  };
}

export interface InboxDeferral {
  /** Why the event waits (already truncated); kept as outcome_detail. */
  reason: string;
  delayMs: number;
  /** Waiting since the first deferral this long parks the row instead (`waited_too_long`). */
  maxWaitMs: number;
}

/**
 * "Retry later": gives the attempt back (attempts - 1, deferrals + 1), stamps waiting_since on the
 * first deferral and sets next_attempt_at after `delayMs` (`received`, `waiting`), or parks the
 * row (`failed`, `waited_too_long`) once it has waited `maxWaitMs`.
 */
export async function deferInboxEvent(
  db: Kysely<DB>,
  inboxEventId: number,
  deferral: InboxDeferral,
): Promise<InboxEventRow | undefined> {
  const { reason, delayMs, maxWaitMs } = deferral;
  const overdue = sql<boolean>`(waiting_since IS NOT NULL AND waiting_since <= now() - ${sqlMilliseconds(maxWaitMs)})`;
  const rows = await sql<InboxEventRow>`
    UPDATE inbox_events SET
      status = CASE WHEN ${overdue} THEN 'failed' ELSE 'received' END,
      attempts = greatest(attempts - 1, 0),
      deferrals = deferrals + 1,
      waiting_since = coalesce(waiting_since, now()),
      outcome_code = CASE WHEN ${overdue} THEN 'waited_too_long' ELSE 'waiting' END,
      outcome_detail = ${reason},
      last_error = CASE WHEN ${overdue}
        THEN left('waited since ' || waiting_since::text || ' for: ' || ${reason}, ${ERROR_TEXT_MAX_LENGTH})
        ELSE last_error END,
      next_attempt_at = CASE WHEN ${overdue} THEN NULL ELSE now() + ${sqlMilliseconds(delayMs)} END,
      enqueued_at = now(),
      updated_at = now()
    WHERE id = ${inboxEventId} AND status IN ('received', 'processing')
    RETURNING *`.execute(db);
  return rows.rows[0];
}

export type InboxFailure =
  /** Another attempt later: `received`, `retrying`, due after `delayMs`. */
  | { park: false; errorText: string; delayMs: number; detail: string; countAttempt: boolean }
  /** No more attempts: `failed` with `code`. */
  | { park: true; errorText: string; code: ParkedOutcomeCode; countAttempt: boolean };

/**
 * Records a failed attempt: the error text, then either the next attempt's schedule or the row
 * parked. `countAttempt`: the attempt was never claimed (the one-transaction path), so this
 * update counts it.
 */
export async function recordInboxEventFailure(
  db: Kysely<DB>,
  inboxEventId: number,
  failure: InboxFailure,
): Promise<InboxEventRow | undefined> {
  return db
    .updateTable('inbox_events')
    .set({
      last_error: failure.errorText,
      status: failure.park ? 'failed' : 'received',
      outcome_code: failure.park ? failure.code : ('retrying' satisfies ReceivedOutcomeCode),
      outcome_detail: failure.park ? null : failure.detail,
      next_attempt_at: failure.park ? null : sql`now() + ${sqlMilliseconds(failure.delayMs)}`,
      enqueued_at: sql`now()`,
      updated_at: sql`now()`,
      ...(failure.countAttempt ? { attempts: sql<number>`attempts + 1` } : {}),
    })
    .where('id', '=', inboxEventId)
    .where('status', 'in', ['received', 'processing'])
    .returningAll()
    .executeTakeFirst();
}

/** The row's status now, or undefined when there is no such row. */
export async function readInboxEventStatus(
  db: Kysely<DB>,
  inboxEventId: number,
): Promise<InboxEventRow['status'] | undefined> {
  const row = await db.selectFrom('inbox_events').select('status').where('id', '=', inboxEventId).executeTakeFirst();
  return row?.status;
}

/**
 * The first statement of an attempt's transaction (process-inbox-events.ts), for one event or
 * many alike: the advisory locks of every user the rows name, of the canonical user each of
 * those ids is linked to (a handler that locks the linked user, lockUser, then finds it held) and
 * of `alsoLock`, taken in the one order (userLocksInKeyOrder) so that two attempts, or an attempt
 * and any other transaction, cannot wait on each other in a cycle; then the rows, by primary key,
 * in id order. The locks are a one-time filter evaluated before the scan. Each id's link is a
 * probe of its key (LATERAL), not a join the compiled plan may keep as a scan of every alias.
 *
 * `lockRows` false (first runs): no row lock, and the rows may be read from a snapshot older than
 * a lock's previous holder's commit: only the conditional mark (markInboxEventsFinished) decides,
 * and every later statement sees that commit; an attempt that turns out to need the claim writes
 * nothing at all. `lockRows` true (claimed rows): each row locked FOR UPDATE and read at its
 * latest version, so a claim made meanwhile waits for this transaction.
 */
export async function lockUsersAndReadInboxEvents(
  trx: Transaction<DB>,
  inboxEventIds: readonly number[],
  { alsoLock = [], lockRows }: { alsoLock?: readonly string[]; lockRows: boolean },
): Promise<InboxEventRow[]> {
  const read = lockRows ? readLockedWithUserLocks : readWithUserLocks;
  const rows = await read(trx, { namespace: USER_LOCK_NAMESPACE, inboxEventIds, alsoLock });
  return rows.rows;
}

/** lockUsersAndReadInboxEvents' statement, written once for both forms. */
const readInboxEventsWithUserLocks = (lockRows: boolean) =>
  precompiledSql<{ namespace: number; inboxEventIds: readonly number[]; alsoLock: readonly string[] }, InboxEventRow>(
    // guard: inbox-user-lock-first-run
    // guard: inbox-user-lock-claimed
    // guard: inbox-user-lock-alias-probe
    (s) => sql`
    WITH user_locks AS MATERIALIZED (${userLocksInKeyOrder(
      s.namespace,
      sql`SELECT user_id FROM inbox_events WHERE id = ANY(${s.inboxEventIds}::bigint[])
          UNION ALL
          SELECT aliases.user_id
            FROM inbox_events,
                 LATERAL (SELECT user_id FROM user_aliases WHERE alias = inbox_events.user_id LIMIT 1) AS aliases
           WHERE inbox_events.id = ANY(${s.inboxEventIds}::bigint[])
          UNION ALL
          SELECT unnest(${s.alsoLock}::text[])`,
    )})
    SELECT * FROM inbox_events
     WHERE id = ANY(${s.inboxEventIds}::bigint[]) AND (SELECT count(*) FROM user_locks) >= 0
     ORDER BY id${lockRows ? sql` FOR UPDATE` : sql``}`,
  );

// Precompiled (db/precompiled-sql.ts): these run once per attempt on the hot path.
const readWithUserLocks = readInboxEventsWithUserLocks(false);
const readLockedWithUserLocks = readInboxEventsWithUserLocks(true);

/** One row's finish in markInboxEventsFinished. */
export interface FinishMark {
  inboxEventId: number;
  result: FinishedResult;
}

/**
 * Marks an attempt's rows finished in one statement, in the transaction that applied their
 * effects. `first-attempt`: only a row still `received` with no attempt spent, the attempt
 * counted here. `claimed`: a row this run claimed and holds locked (still `processing` or
 * `received`), its attempt counted by the claim. Returns the rows it marked; a row missing from
 * the answer did not meet the condition (the caller then rolls the attempt back).
 */
export async function markInboxEventsFinished(
  trx: Transaction<DB>,
  marks: readonly FinishMark[],
  mode: 'first-attempt' | 'claimed',
): Promise<Map<number, FinishedColumns>> {
  const mark = mode === 'first-attempt' ? markFirstAttemptsFinished : markClaimedFinished;
  const rows = await mark(trx, {
    ids: marks.map((mark) => mark.inboxEventId),
    statuses: marks.map((mark) => mark.result.kind),
    codes: marks.map((mark) => mark.result.code),
    details: marks.map((mark) => mark.result.detail),
  });
  const byId = new Map(marks.map((mark) => [mark.inboxEventId, mark.result]));
  const finished = new Map<number, FinishedColumns>();
  for (const row of rows.rows) {
    const result = byId.get(row.id);
    if (result !== undefined) finished.set(row.id, finishedColumnsOf(result, row));
  }
  return finished;
}

/**
 * The rows are found by id alone. The condition on their state is wrapped in `IS TRUE` so that no
 * index on `status` can serve it: with statistics taken when nothing was waiting (the usual state
 * of a drained inbox), the planner believes `status = 'received'` matches one row, and in a
 * backlog it then read every waiting row through the pending or status index for each batch
 * (9,044 rows read to mark 16 in one batch of a drain, 4.2 ms of Postgres per event). Wrapped, the
 * primary key is the only index left, whatever the statistics say. The condition still filters
 * each row, and is checked again on the newest version of a row another transaction changed.
 */
const markFinished = (firstAttempt: boolean) =>
  precompiledSql<
    { ids: number[]; statuses: string[]; codes: string[]; details: string[] },
    { id: number; attempts: number; processed_at: Date }
  >(
    // guard: batch-finish-conditional
    (s) => sql`
    UPDATE inbox_events SET
      status = mark.status,
      outcome_code = mark.code,
      outcome_detail = mark.detail,
      last_error = NULL,
      next_attempt_at = NULL,
      waiting_since = NULL,
      processed_at = now(),
      updated_at = now(),
      attempts = inbox_events.attempts${firstAttempt ? sql` + 1` : sql``}
    FROM unnest(${s.ids}::bigint[], ${s.statuses}::text[], ${s.codes}::text[], ${s.details}::text[])
           AS mark (id, status, code, detail)
    ${
      firstAttempt
        ? sql`WHERE inbox_events.id = mark.id AND (inbox_events.status = 'received' AND inbox_events.attempts = 0) IS TRUE`
        : sql`WHERE inbox_events.id = mark.id AND (inbox_events.status IN ('received', 'processing')) IS TRUE`
    }
    RETURNING inbox_events.id, inbox_events.attempts, inbox_events.processed_at`,
  );

const markFirstAttemptsFinished = markFinished(true);
const markClaimedFinished = markFinished(false);
