import type { Kysely } from 'kysely';
import type { DB, StudioRequestRow, StudioRequestStatus } from '../db/schema';
import { BillingError, isRetryable, NotConfiguredError, toErrorText } from '../errors';
import type { AiStudioService } from '../ports/ai-studio-service';
import { type BackoffSettings, computeBackoffDelayMs } from '../scheduling/backoff';
import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';
import { claimStudioRequest, rescheduleStudioRequest } from './claim-studio-request';
import { completeStudioRequest } from './complete-studio-request';
import { failStudioRequest } from './fail-studio-request';
import type { RefundStudioRequestResult } from './refund-studio-request';

export interface StudioProcessorDeps {
  db: Kysely<DB>;
  /** The process's app webhook outbox (the settlement's message, its refund's wallet.credited). */
  outbox: AppWebhookOutbox;
  /** Missing: requests fail with `not_configured` and are refunded. */
  aiStudio: AiStudioService | undefined;
  /** Attempts (each one started) before an unreachable AI service fails the request (STUDIO_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Delay before the next attempt while the AI service is unreachable (STUDIO_BACKOFF_*). */
  backoff: BackoffSettings;
}

export type ProcessStudioRequestResult =
  | { kind: 'completed'; request: StudioRequestRow }
  | { kind: 'failed'; request: StudioRequestRow; code: string; refund: RefundStudioRequestResult['kind'] }
  /** The AI service was not reached (nothing sent): the row is due again after delayMs. */
  | { kind: 'retry'; request: StudioRequestRow; code: string; delayMs: number }
  /** The AI answered after another run (the sweeper) settled the request: its outcome was discarded. */
  | { kind: 'discarded'; request: StudioRequestRow; status: StudioRequestStatus }
  /** Not claimable: finished, or processing under another (possibly dead) worker. */
  | { kind: 'skipped'; status: StudioRequestStatus }
  | { kind: 'not-found' };

/**
 * Runs one generation. Safe to call any number of times, from any replica.
 *
 * Claim (received → processing), call the AI service outside any transaction, then settle:
 * completed with the result (conditional on still processing), or failed and refunded in one
 * transaction. Only a failure that provably sent nothing (AiStudioUnreachableError) is retried,
 * up to maxAttempts; a timeout, a non-2xx answer or a broken connection fail the request at once
 * (the service may have run the generation: a second call could run it twice). Throws only when
 * the database fails; a request left in processing then is settled by the sweeper.
 */
export async function processStudioRequest(deps: StudioProcessorDeps, id: number): Promise<ProcessStudioRequestResult> {
  const claimed = await claimStudioRequest(deps.db, id);
  if (!claimed) {
    const row = await deps.db.selectFrom('studio_requests').select('status').where('id', '=', id).executeTakeFirst();
    return row ? { kind: 'skipped', status: row.status } : { kind: 'not-found' };
  }

  let result: unknown;
  try {
    if (!deps.aiStudio) throw new NotConfiguredError('the AI service (AI_STUDIO_BASE_URL)');
    result = await deps.aiStudio.generate({
      requestId: claimed.public_id,
      kind: claimed.kind,
      ...(claimed.duration_seconds === null ? {} : { durationSeconds: claimed.duration_seconds }),
      ...(claimed.kind === 'music' ? { full: claimed.full } : {}),
      input: claimed.input,
    });
  } catch (error) {
    const code = error instanceof BillingError ? error.code : 'ai_failed';
    const message = toErrorText(error);
    const maxAttempts = deps.maxAttempts;
    if (isRetryable(error) && error instanceof BillingError && claimed.attempts < maxAttempts) {
      const delayMs = computeBackoffDelayMs(claimed.attempts, deps.backoff);
      const rescheduled = await rescheduleStudioRequest(deps.db, id, delayMs, { code, message });
      if (rescheduled) return { kind: 'retry', request: rescheduled, code, delayMs };
      return settledElsewhere(deps.db, claimed);
    }
    const failed = await failStudioRequest(deps, id, { code, message }, { from: ['processing'] });
    if (failed.kind === 'failed') return { kind: 'failed', request: failed.request, code, refund: failed.refund };
    return settledElsewhere(deps.db, claimed);
  }

  const completed = await completeStudioRequest(deps, id, result);
  if (completed.kind === 'completed') return completed;
  return settledElsewhere(deps.db, claimed);
}

async function settledElsewhere(db: Kysely<DB>, claimed: StudioRequestRow): Promise<ProcessStudioRequestResult> {
  const row = await db.selectFrom('studio_requests').select('status').where('id', '=', claimed.id).executeTakeFirst();
  return row ? { kind: 'discarded', request: claimed, status: row.status } : { kind: 'not-found' };
}
