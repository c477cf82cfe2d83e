import type { InboxEventRow } from '../db/schema';

/**
 * What the worker knows of the job that carries an event, read from its queue's metadata in one
 * place (apps/worker inbox-processor.ts, jobFactsOf); nothing else of the queue reaches the engine.
 */
export interface JobFacts {
  /** Runs of the job started so far, this one included (BullMQ `attemptsStarted`). */
  runsStarted: number;
  /** Runs of the job that died with their process or stalled (BullMQ `stalledCounter`). */
  stalls: number;
}

/**
 * Where a job waits for its attempt in a worker process:
 * - `first-runs`: its first run, coalesced with the other first runs that arrive while the
 *   process's transactions are busy (one transaction for several events; platform's transaction-batcher.ts);
 * - `stalled`: a re-run after its last run died with its process. These run one at a time per
 *   process and claim nothing while they wait: if one of them is the event that killed the
 *   process, only its own attempt is counted when it kills it again, not those of the others that
 *   died beside it (they would otherwise spend their attempts on its deaths and park with it);
 * - `alone`: any other re-run (the database failed while recording an outcome): at once, alone.
 */
export type AttemptLane = 'first-runs' | 'stalled' | 'alone';

export function laneOf(facts: JobFacts): AttemptLane {
  if (isFirstRun(facts)) return 'first-runs';
  // guard: stalled-lane
  if (facts.stalls > 0) return 'stalled';
  return 'alone';
}

/**
 * How an event's attempt runs:
 * - `one-transaction`: user lock, read, apply and the finished mark with its attempt counted, in
 *   one transaction (shared with the other first runs of a batch), when the handler's prepare is
 *   `ready` (no provider read); otherwise, or when the mark does not hold, it claims;
 * - `claim`: the claim first (attempts + 1, committed: an event that kills its worker still spends
 *   its budget), the provider reads outside any transaction, then apply and mark.
 */
export type AttemptPlan = 'one-transaction' | 'claim';

/**
 * The one decision of the engine. Only a job's first run may skip the claim: a worker that dies
 * inside the one transaction leaves no attempt counted, but its job then re-runs as a stalled job,
 * which claims, so an event that kills its worker still parks after INBOX_MAX_ATTEMPTS + 1
 * deaths. `row` is the event as the one transaction read it (`unread`: not yet read, when the
 * engine asks whether to open that transaction at all); only a row still `received` with no
 * attempt spent takes it. A missing row claims (the claim answers `not-found`).
 */
export function planAttempt(
  facts: JobFacts,
  row: Pick<InboxEventRow, 'status' | 'attempts'> | undefined | 'unread',
): AttemptPlan {
  // guard: first-run-only-once
  if (!isFirstRun(facts)) return 'claim';
  if (row === 'unread') return 'one-transaction';
  return row !== undefined && row.status === 'received' && row.attempts === 0 ? 'one-transaction' : 'claim';
}

function isFirstRun(facts: JobFacts): boolean {
  return facts.runsStarted <= 1 && facts.stalls === 0;
}
