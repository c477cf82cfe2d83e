import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { AppleConsumptionRequestRow, AppleConsumptionStatus, DB } from '../../db/schema';
import { BillingError, isRetryable, RetryLaterError, toErrorText } from '../../errors';
import type { AppleConsumptionInformation, AppStoreApi } from '../../ports/app-store-api';
import { type BackoffSettings, computeBackoffDelayMs } from '../../scheduling/backoff';
import { hasStoreConsent } from '../../stores/store-accounts';

export interface AppleConsumptionDeps {
  db: Kysely<DB>;
  /** Undefined (no APPLE_KEY_ID…): requests wait, retried with backoff until configured or expired. */
  appStore: AppStoreApi | undefined;
  /** A claimed request is not claimed again before this: longer than an API call. */
  leaseMs: number;
  backoff: BackoffSettings;
}

/**
 * What one run of a request came to (the worker's `tally_apple_consumption_requests_total{outcome}`):
 * Apple answered 2xx; the user never consented (nothing sent); Apple refused the body (4xx);
 * past Apple's 12-hour window; Apple unreachable or not configured, asked again later; ended
 * meanwhile by another run.
 */
export const appleConsumptionOutcomes = [
  'sent',
  'no_consent',
  'rejected',
  'expired',
  'retry',
  'finished_elsewhere',
] as const;
export type AppleConsumptionOutcome = (typeof appleConsumptionOutcomes)[number];

/**
 * Claims due requests (pending, lease free): tries + 1, leased for leaseMs, SKIP LOCKED (any
 * number of loops may run). A claim whose worker died is due again once its lease ends.
 */
export async function claimAppleConsumptionRequests(
  db: Kysely<DB>,
  options: { leaseMs: number; batchSize: number },
): Promise<AppleConsumptionRequestRow[]> {
  // guard: apple-consumption-never-twice
  const rows = await sql<AppleConsumptionRequestRow>`
    UPDATE apple_consumption_requests
       SET tries = tries + 1, locked_until = now() + ${sqlMilliseconds(options.leaseMs)}, updated_at = now()
     WHERE id IN (SELECT id FROM apple_consumption_requests
                   WHERE status = 'pending' AND next_attempt_at <= now()
                     AND (locked_until IS NULL OR locked_until <= now())
                   ORDER BY next_attempt_at LIMIT ${options.batchSize}
                   FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  return rows.rows;
}

/**
 * The share of the pack's lot spent, in milliunits (0 to 100000): what Apple's
 * `consumptionPercentage` asks for. The lot is the credit's (`credit_lots.source` is the
 * payment's ledger reference); spent is what left it for any reason (spends, holds captured, a
 * debt it settled). Undefined when the lot cannot be found (the field is then omitted).
 */
export async function consumptionPercentageOf(db: Kysely<DB>, paymentId: number): Promise<number | undefined> {
  const lot = await db
    .selectFrom('payments')
    .innerJoin('credit_lots', 'credit_lots.source', 'payments.ledger_reference')
    .select(['credit_lots.amount', 'credit_lots.remaining'])
    .where('payments.id', '=', paymentId)
    .executeTakeFirst();
  if (!lot || Number(lot.amount) <= 0) return undefined;
  const spent = Number(lot.amount) - Number(lot.remaining);
  return Math.min(100_000, Math.max(0, Math.round((spent * 100_000) / Number(lot.amount))));
}

/**
 * Answers one claimed CONSUMPTION_REQUEST (docs/stores-apple.md), outside any transaction: past
 * Apple's window it expires; without the user's recorded consent nothing is sent (`no_consent`);
 * otherwise Send Consumption Information with the share of the pack's lot spent. A 2xx finishes
 * the row `sent` and it is never sent again; 429, 5xx, a timeout or no configuration leave it
 * pending for a later claim (backoff); another 4xx finishes it `rejected`.
 */
export async function answerAppleConsumptionRequest(
  deps: AppleConsumptionDeps,
  request: AppleConsumptionRequestRow,
): Promise<{ outcome: AppleConsumptionOutcome; code?: string }> {
  if (Date.now() > new Date(request.answer_by).getTime()) return finish(deps, request, 'expired', {});
  // guard: apple-consumption-consent
  if (!(await hasStoreConsent(deps.db, request.user_id))) return finish(deps, request, 'no_consent', {});
  const percentage = await consumptionPercentageOf(deps.db, request.payment_id);
  const body: AppleConsumptionInformation = {
    customerConsented: true,
    ...(percentage === undefined ? {} : { consumptionPercentage: percentage }),
    deliveryStatus: 'DELIVERED',
    sampleContentProvided: false,
  };
  try {
    if (!deps.appStore) {
      throw new BillingError(
        'not_configured',
        'the App Store Server API (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH) is not configured',
        { retryable: true },
      );
    }
    await deps.appStore.sendConsumptionInformation(request.environment, request.transaction_id, body);
  } catch (error) {
    if (isRetryable(error)) return retryLater(deps, request, error);
    return finish(deps, request, 'rejected', { percentage, error: toErrorText(error) });
  }
  return finish(deps, request, 'sent', { percentage });
}

/** Ends a pending request (only a pending one: a run that lost its lease finds it finished). */
async function finish(
  deps: AppleConsumptionDeps,
  request: AppleConsumptionRequestRow,
  status: Exclude<AppleConsumptionStatus, 'pending'>,
  details: { percentage?: number | undefined; error?: string },
): Promise<{ outcome: AppleConsumptionOutcome; code?: string }> {
  const ended = await deps.db
    .updateTable('apple_consumption_requests')
    .set({
      status,
      consumption_percentage: status === 'sent' || status === 'rejected' ? (details.percentage ?? null) : null,
      last_error: details.error ?? null,
      locked_until: null,
      finished_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('id', '=', request.id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(ended.numUpdatedRows) === 0) return { outcome: 'finished_elsewhere' };
  return { outcome: status };
}

/** Apple did not take it now: pending again after the backoff (or Apple's Retry-After). */
async function retryLater(
  deps: AppleConsumptionDeps,
  request: AppleConsumptionRequestRow,
  error: unknown,
): Promise<{ outcome: AppleConsumptionOutcome; code?: string }> {
  const backoffMs = computeBackoffDelayMs(request.tries, deps.backoff);
  const delayMs = error instanceof RetryLaterError ? Math.max(backoffMs, error.delayMs ?? 0) : backoffMs;
  await deps.db
    .updateTable('apple_consumption_requests')
    .set({
      locked_until: null,
      next_attempt_at: sql`now() + ${sqlMilliseconds(delayMs)}`,
      last_error: toErrorText(error).slice(0, 1_000),
      updated_at: sql`now()`,
    })
    .where('id', '=', request.id)
    .where('status', '=', 'pending')
    .execute();
  return { outcome: 'retry', code: error instanceof BillingError ? error.code : 'apple_unavailable' };
}
