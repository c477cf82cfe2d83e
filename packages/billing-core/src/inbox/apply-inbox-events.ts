import { commitWith, rollbackWith, type TransactionDecision } from '@tally/platform/db';
import type { InboxEventRow } from '../db/schema';
import { RetryLaterError } from '../errors';
import { pendingPostings } from '../ledger/pending-postings';
import { runInUnitOfWork } from '../unit-of-work/unit-of-work';
import { UserLockOrderError } from '../users/lock-user';
import type { Engine, FinishedAttempt } from './inbox-engine';
import type { FinishedResult } from './inbox-handler';
import { lockUsersAndReadInboxEvents, markInboxEventsFinished } from './inbox-transitions';
import { type JobFacts, planAttempt } from './plan-attempt';

/**
 * The events of one attempt's transaction. `one-transaction`: first runs, read, prepared, applied
 * and marked in it (one event or many alike). `claim`: one event this run claimed, with what its
 * prepare (and provider read, outside any transaction) gave apply; `alsoLock`, users to lock
 * with its own, in the one order (a pass after a UserLockOrderError).
 */
export type AttemptEvents =
  | { plan: 'one-transaction'; facts: JobFacts; ids: readonly number[] }
  | { plan: 'claim'; claimed: ClaimedEvent; alsoLock: readonly string[] };

export interface ClaimedEvent {
  /** The row as the claim left it (attempts counted). */
  row: InboxEventRow;
  prepared: unknown;
  touchesLedger: boolean;
}

/**
 * What the attempt's transaction came to: `applied`, committed, with the rows it marked finished
 * (none: nothing was written, it rolled back) and the rows it found finished or parked
 * (`skipped`, of a claimed event); a first run neither finished nor skipped was not applied (it
 * is no longer a first run, or its handler needs a provider read) and claims. Or `rolled-back`,
 * with why.
 */
export type AttemptOutcome =
  | { kind: 'applied'; finished: Map<number, FinishedAttempt>; skipped: Map<number, InboxEventRow['status']> }
  | { kind: 'rolled-back'; cause: RollbackCause };

/** Why the attempt's transaction rolled back, as the outcome of a batch of one records it. */
export type RollbackCause =
  /** Nothing of the event's own went wrong (a mark that did not hold, a lock out of order, no read): claim. */
  | { kind: 'claim' }
  /** The handler asked to wait (a UserLockOrderError too); its effects were rolled back. */
  | { kind: 'retry-later'; row: InboxEventRow; error: RetryLaterError }
  /** The handler failed; its effects were rolled back. */
  | { kind: 'failed'; row: InboxEventRow; error: unknown };

const claim: RollbackCause = { kind: 'claim' };

/**
 * The engine's one transaction body, for every attempt (docs/engine.md#one-attempt-path): the users'
 * advisory locks in the one order and the rows (claimed rows also row-locked), then each event in
 * id order (one user's events see each other's effects) applied, the postings its handler handed
 * over made by the ledger (pendingPostings: a batch's together, before any apply that touches
 * the ledger), then every applied row marked finished in one conditional statement, COMMIT, and
 * the messages' hand-off. Anything that goes wrong rolls the whole transaction back and says why.
 * Throws only when the database fails outside the transaction's work (BEGIN, COMMIT).
 */
export async function applyInboxEvents(engine: Engine, attempt: AttemptEvents): Promise<AttemptOutcome> {
  const claimed = attempt.plan === 'claim' ? attempt.claimed : undefined;
  const ids = attempt.plan === 'claim' ? [attempt.claimed.row.id] : attempt.ids;
  let applying: InboxEventRow | undefined = claimed?.row;
  try {
    return await runInUnitOfWork(
      { db: engine.db, outbox: engine.outbox, clock: engine.ctx.clock },
      async (uow): Promise<TransactionDecision<AttemptOutcome>> => {
        const rows = await lockUsersAndReadInboxEvents(uow.trx, ids, {
          alsoLock: attempt.plan === 'claim' ? attempt.alsoLock : [],
          lockRows: claimed !== undefined,
        });
        if (claimed && rows.length === 0) throw new Error(`inbox event ${claimed.row.id} disappeared`);
        const postings = pendingPostings(uow);
        const applied: { row: InboxEventRow; result: () => FinishedResult }[] = [];
        const skipped = new Map<number, InboxEventRow['status']>();
        for (const read of rows) {
          let row = read;
          let ready: { prepared: unknown; touchesLedger: boolean };
          if (claimed) {
            if (read.status !== 'processing' && read.status !== 'received') {
              skipped.set(read.id, read.status);
              continue;
            }
            row = claimed.row;
            ready = claimed;
          } else {
            if (attempt.plan !== 'one-transaction' || planAttempt(attempt.facts, read) !== 'one-transaction') continue;
            applying = row;
            const preparation = engine.handlers[row.provider].prepare(row, engine.ctx);
            // A provider read never runs inside a transaction: the event claims, and reads outside.
            if (preparation.kind === 'read') continue;
            ready = preparation;
          }
          applying = row;
          // An apply that may read what a pending posting writes sees it made first.
          // guard: inbox-postings-before-apply
          if (ready.touchesLedger) await postings.post();
          // guard: batch-apply-failure-rollback
          const result = await engine.handlers[row.provider].apply(uow, row, ready.prepared);
          // "Retry later" from apply must leave no effect behind: roll the transaction back.
          if (result.kind === 'retry-later') {
            const error = new RetryLaterError(result.reason, { delayMs: result.delayMs });
            // guard: retry-later-rollback-first-run
            // guard: retry-later-rollback-claimed
            return rollbackWith({ kind: 'rolled-back', cause: { kind: 'retry-later', row, error } });
          }
          applied.push({
            row,
            result: result.kind === 'post' ? postings.add(result.posting, result.finish) : () => result,
          });
        }
        if (applied.length === 0) return rollbackWith({ kind: 'applied', finished: new Map(), skipped });
        // The postings still pending; one that throws is charged to `applying` in a batch of one.
        await postings.post();
        const marks = applied.map(({ row, result }) => ({ inboxEventId: row.id, result: result() }));
        const marked = await markInboxEventsFinished(uow.trx, marks, claimed ? 'claimed' : 'first-attempt');
        if (marked.size !== marks.length) {
          if (claimed) throw new Error(`inbox event ${claimed.row.id} changed under its row lock`);
          // A row another run claimed after our read: undo everything.
          return rollbackWith({ kind: 'rolled-back', cause: claim });
        }
        const path = claimed ? 'claimed' : ids.length === 1 ? 'one-transaction' : 'batch';
        const finished = new Map<number, FinishedAttempt>();
        for (const [index, { row }] of applied.entries()) {
          const { kind, code, detail } = (marks[index] as (typeof marks)[number]).result;
          finished.set(row.id, { kind, row: { ...row, ...marked.get(row.id) }, code, detail, path });
        }
        return commitWith({ kind: 'applied', finished, skipped });
      },
    );
  } catch (error) {
    // A first run that failed before any apply (the read, a lock) or met a user lock out of order
    // held elsewhere: the claimed attempt takes them all in order.
    if (!claimed && (applying === undefined || error instanceof UserLockOrderError)) {
      return { kind: 'rolled-back', cause: claim };
    }
    const row = applying as InboxEventRow;
    if (error instanceof RetryLaterError) return { kind: 'rolled-back', cause: { kind: 'retry-later', row, error } };
    return { kind: 'rolled-back', cause: { kind: 'failed', row, error } };
  }
}
