import type { Kysely } from 'kysely';
import type { DB, InboxEventRow } from '../db/schema';
import { ERROR_TEXT_MAX_LENGTH, isRetryable, type RetryLaterError, toErrorText } from '../errors';
import { computeBackoffDelayMs } from '../scheduling/backoff';
import type { Engine, ProcessInboxEventResult } from './inbox-engine';
import { deferInboxEvent, readInboxEventStatus, recordInboxEventFailure } from './inbox-transitions';
import { type ParkedOutcomeCode, parkedOutcomeCodeOf } from './outcome-codes';

/** "Retry later": the handler's delay or a growing default; parked past the maximum wait. */
export async function recordDeferral(
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
export async function recordFailure(
  engine: Engine,
  claimed: InboxEventRow,
  error: unknown,
  /** `countAttempt`: the attempt was not claimed (a first run); the update counts it. */
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

/** What a run that changed nothing answers: the row's status now, or `not-found`. */
export async function currentStatus(db: Kysely<DB>, inboxEventId: number): Promise<ProcessInboxEventResult> {
  const status = await readInboxEventStatus(db, inboxEventId);
  return status === undefined ? { kind: 'not-found' } : { kind: 'skipped', status };
}
