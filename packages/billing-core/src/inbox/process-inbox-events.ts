import { systemClock } from '../clock';
import { RetryLaterError } from '../errors';
import { UserLockOrderError } from '../users/lock-user';
import { type AttemptEvents, type AttemptOutcome, applyInboxEvents, type ClaimedEvent } from './apply-inbox-events';
import type { Engine, InboxProcessorDeps, ProcessInboxEventResult } from './inbox-engine';
import { claimInboxEvent } from './inbox-transitions';
import { type AttemptPlan, type JobFacts, planAttempt } from './plan-attempt';
import { currentStatus, recordDeferral, recordFailure } from './record-inbox-outcome';

export type { InboxProcessorDeps, ProcessInboxEventResult, RetryLaterSettings } from './inbox-engine';

/**
 * Processes inbox rows: the engine's one entry point (a single event is a batch of one), safe to
 * call concurrently from any replica; results come back in the order of `inboxEventIds`. Every
 * attempt runs one path (runAttempt): the claim first when planAttempt says so, the one
 * transaction (applyInboxEvents), then the outcome recorded (docs/engine.md#one-attempt-path). How the
 * ids were gathered is the caller's business: first runs share one transaction, claimed events
 * run one each. Throws only when the database itself fails.
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
      ? (await Promise.all(unique.map((id) => runAttempt(engine, facts, 'claim', [id])))).flat()
      : await runAttempt(engine, facts, 'one-transaction', unique);
  const byId = new Map(unique.map((id, index) => [id, results[index] as ProcessInboxEventResult]));
  // An id given twice: its second occurrence finds the row as the first left it.
  const seen = new Set<number>();
  return Promise.all(
    inboxEventIds.map(async (id) => {
      if (seen.has(id)) return (await runAttempt(engine, facts, 'claim', [id]))[0] as ProcessInboxEventResult;
      seen.add(id);
      return byId.get(id) as ProcessInboxEventResult;
    }),
  );
}

/**
 * Passes of a claimed apply whose handler met a user lock out of order: the second takes every
 * user the first asked for up front; a third covers a link made in between. Then the
 * UserLockOrderError (a retry later) defers the event.
 */
const maxLockOrderPasses = 3;

/**
 * One attempt of distinct events, in steps: (1) with plan `claim` (one event), the claim
 * (attempts + 1, committed: an event that kills its worker still spends its budget), then its
 * prepare and provider read outside any transaction; (2) the one transaction; (3) its outcome:
 * finished rows answered, a first run not applied claims, a rolled-back batch of several runs
 * each event again as a batch of one, and a batch of one records its deferral or failure.
 */
async function runAttempt(
  engine: Engine,
  facts: JobFacts,
  plan: AttemptPlan,
  ids: readonly number[],
): Promise<ProcessInboxEventResult[]> {
  if (ids.length === 0) return [];
  let events: (alsoLock: readonly string[]) => AttemptEvents;
  if (plan === 'claim') {
    const claimed = await claimAndPrepare(engine, ids[0] as number);
    if (claimed.kind === 'answered') return [claimed.result];
    events = (alsoLock) => ({ plan, claimed: claimed.event, alsoLock });
  } else {
    events = () => ({ plan, facts, ids });
  }

  // The users a pass's handler needed out of order (UserLockOrderError): the next pass takes them
  // with the event's user, in the one order, and so waits for them instead.
  let alsoLock: readonly string[] = [];
  let outcome: AttemptOutcome;
  for (let pass = 1; ; pass += 1) {
    outcome = await applyInboxEvents(engine, events(alsoLock));
    const cause = outcome.kind === 'rolled-back' ? outcome.cause : undefined;
    if (cause?.kind !== 'retry-later' || !(cause.error instanceof UserLockOrderError)) break;
    // guard: lock-order-retry
    if (pass >= maxLockOrderPasses) break;
    alsoLock = [...new Set([...alsoLock, ...cause.error.userIds])];
  }

  if (outcome.kind === 'applied') {
    const { finished, skipped } = outcome;
    return Promise.all(
      ids.map(async (id) => {
        const status = skipped.get(id);
        if (status !== undefined) return { kind: 'skipped', status } as const;
        return finished.get(id) ?? ((await runAttempt(engine, facts, 'claim', [id]))[0] as ProcessInboxEventResult);
      }),
    );
  }
  // Several: each runs again as a batch of one, as if the batch had never been tried.
  if (ids.length > 1) return (await Promise.all(ids.map((id) => runAttempt(engine, facts, plan, [id])))).flat();
  const { cause } = outcome;
  switch (cause.kind) {
    case 'claim':
      if (plan === 'claim') throw new Error(`a claimed attempt of inbox event ${ids[0]} asked to claim again`);
      return runAttempt(engine, facts, 'claim', ids);
    case 'retry-later':
      return [await recordDeferral(engine, cause.row, cause.error)];
    case 'failed':
      // A first run's attempt was not claimed: count it, as the claim would have.
      return [
        plan === 'claim'
          ? await recordFailure(engine, cause.row, cause.error, { countAttempt: false })
          : await recordFailure(engine, { ...cause.row, attempts: cause.row.attempts + 1 }, cause.error, {
              countAttempt: true,
            }),
      ];
    default: {
      const exhaustive: never = cause;
      throw new Error(`unhandled rollback ${JSON.stringify(exhaustive)}`);
    }
  }
}

/**
 * The claim-first step: the claim, then the event's prepare and provider read, outside any
 * transaction. `answered` when the attempt ends here: nothing to claim, the budget spent by
 * attempts that died, or a prepare that failed or asked to wait (recorded).
 */
async function claimAndPrepare(
  engine: Engine,
  inboxEventId: number,
): Promise<{ kind: 'answered'; result: ProcessInboxEventResult } | { kind: 'claimed'; event: ClaimedEvent }> {
  const claimed = await claimInboxEvent(engine.db, inboxEventId, engine.maxAttempts);
  if (!claimed) return { kind: 'answered', result: await currentStatus(engine.db, inboxEventId) };
  if (claimed.status === 'failed') {
    // The budget was spent by attempts that never recorded an outcome: the worker died each time.
    const error = new Error(claimed.last_error ?? '');
    return {
      kind: 'answered',
      result: {
        kind: 'failed',
        error,
        row: claimed,
        parked: true,
        delayMs: 0,
        retryable: false,
        code: 'attempts_exhausted',
      },
    };
  }
  try {
    const preparation = engine.handlers[claimed.provider].prepare(claimed, engine.ctx);
    const prepared = preparation.kind === 'ready' ? preparation.prepared : await preparation.read();
    return { kind: 'claimed', event: { row: claimed, prepared, touchesLedger: preparation.touchesLedger } };
  } catch (error) {
    const result =
      error instanceof RetryLaterError
        ? await recordDeferral(engine, claimed, error)
        : await recordFailure(engine, claimed, error, { countAttempt: false });
    return { kind: 'answered', result };
  }
}
