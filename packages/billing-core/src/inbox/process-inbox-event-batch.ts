import { systemClock } from '../clock';
import { commitWith, rollbackWith, type TransactionDecision } from '../db/run-in-transaction';
import type { InboxEventRow } from '../db/schema';
import { runInUnitOfWork } from '../unit-of-work/unit-of-work';
import type { HandlerContext } from './inbox-handler';
import {
  type FinishedResult,
  type FinishMark,
  lockUsersAndReadInboxEvents,
  markInboxEventsFinished,
} from './inbox-transitions';
import { type InboxProcessorDeps, type ProcessInboxEventResult, processInboxEvent } from './process-inbox-event';

/**
 * The first attempts of several inbox events (each job's first run, see processInboxEvent's
 * `firstRun`) coalesced into ONE transaction: the worker hands over the events whose jobs arrived
 * while its earlier transactions were running (apps/worker inbox-batcher.ts), and their database
 * work then shares one BEGIN, one read, one finishing UPDATE and one COMMIT instead of one each:
 * a token pack's own statements (one to three: user linking, the ledger posting) plus four per
 * batch, instead of six to seven round trips per event, the round trips being what the worker's
 * and Postgres's CPU per event was mostly spent on.
 *
 * In the transaction: the advisory locks of every user the rows name, in key order (never in a
 * cycle with another batch or a one-event transaction); the rows; then, in id order, each fresh
 * row (`received`, no attempt spent) whose handler needs no provider read is applied, exactly as
 * the one-event first attempt applies it (so events of one user in a batch apply one after the
 * other, each seeing the previous one's effects); then every applied row is marked finished with
 * its attempt counted, conditionally, in one UPDATE. It commits only when every applied event
 * finished and every mark held.
 *
 * Anything else rolls the WHOLE batch back without a trace (a handler that fails or asks to wait,
 * a mark that did not hold, a deadlock, any database error), and every event of the batch then
 * runs alone through processInboxEvent's first run as if the batch had never been tried: a
 * failure is recorded and counted there, once. Rows the batch did not apply (not fresh, or a
 * handler that must read a provider first) also run alone, after the batch committed. A worker
 * that dies inside the batch leaves nothing: its jobs re-run as stalled jobs, which claim (attempts
 * counted, poison events still park). Money stays fenced by the ledger's unique references, and
 * messages are handed off only after the commit (runInUnitOfWork).
 *
 * Results come back in the order of `inboxEventIds`; an id given twice is run alone for its
 * second occurrence (after the batch, so it finds the row finished).
 */
export async function processInboxEventBatch(
  deps: InboxProcessorDeps,
  inboxEventIds: readonly number[],
): Promise<ProcessInboxEventResult[]> {
  const runAlone = (id: number) => processInboxEvent(deps, id, { firstRun: true });
  if (inboxEventIds.length <= 1) return Promise.all(inboxEventIds.map(runAlone));
  const unique = [...new Set(inboxEventIds)];
  const batch = await attemptBatch(deps, unique);
  const results = new Map<number, ProcessInboxEventResult>(batch.finished);
  const alone = unique.filter((id) => !results.has(id));
  const aloneResults = await Promise.all(alone.map(runAlone));
  for (const [index, id] of alone.entries()) results.set(id, aloneResults[index] as ProcessInboxEventResult);
  const seen = new Set<number>();
  return Promise.all(
    inboxEventIds.map((id) => {
      if (seen.has(id)) return runAlone(id);
      seen.add(id);
      return results.get(id) as ProcessInboxEventResult;
    }),
  );
}

type FinishedAttempt = Extract<ProcessInboxEventResult, { kind: 'processed' | 'ignored' }>;

/** What the batch transaction committed (nothing when it rolled back). */
interface BatchAttempt {
  finished: Map<number, FinishedAttempt>;
}

const nothingCommitted = (): BatchAttempt => ({ finished: new Map() });

async function attemptBatch(deps: InboxProcessorDeps, inboxEventIds: readonly number[]): Promise<BatchAttempt> {
  const ctx: HandlerContext = { clock: deps.clock ?? systemClock };
  try {
    return await runInUnitOfWork(
      { db: deps.db, outbox: deps.outbox, clock: ctx.clock },
      async (uow): Promise<TransactionDecision<BatchAttempt>> => {
        const { trx } = uow;
        const rows = await lockUsersAndReadInboxEvents(trx, inboxEventIds);
        const applied: { row: InboxEventRow; result: FinishedResult }[] = [];
        for (const row of rows) {
          if (row.status !== 'received' || row.attempts !== 0) continue;
          const handler = deps.handlers[row.provider];
          const local = handler.prepareWithoutIo?.(row, ctx);
          if (!local) continue;
          const result = await handler.apply(uow, row, local.prepared);
          // A wait or (below) a throw is the event's own story: told by its run alone.
          if (result.kind === 'retry-later') return rollbackWith(nothingCommitted());
          applied.push({ row, result });
        }
        if (applied.length === 0) return rollbackWith(nothingCommitted());
        const marks: FinishMark[] = applied.map(({ row, result }) => ({ inboxEventId: row.id, result }));
        const marked = await markInboxEventsFinished(trx, marks);
        // A row another run claimed after our read: undo everything; each event then runs alone.
        if (marked.size !== applied.length) return rollbackWith(nothingCommitted());
        const finished = new Map<number, FinishedAttempt>();
        for (const { row, result } of applied) {
          finished.set(row.id, {
            kind: result.kind,
            row: { ...row, ...marked.get(row.id) },
            code: result.code,
            detail: result.detail,
            path: 'batch',
          });
        }
        return commitWith({ finished });
      },
    );
  } catch {
    // A handler's failure, a deadlock, a lost connection, a failed COMMIT: rolled back, so each
    // event runs alone and meets (and records) whatever it meets there.
    return nothingCommitted();
  }
}
