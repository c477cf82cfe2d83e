import { sql } from 'kysely';
import { writeAppWebhookMessage } from '../app-webhooks/write-app-webhook-message';
import type { StudioRequestRow, StudioRequestStatus } from '../db/schema';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { type RefundStudioRequestResult, refundStudioRequest } from './refund-studio-request';
import { studioRequestMessage } from './studio-request-message';

export interface StudioFailure {
  /** Stable machine code: ai_failed, ai_timeout, ai_unreachable, stuck, not_configured… */
  code: string;
  message: string;
}

export type FailStudioRequestResult =
  | { kind: 'failed'; request: StudioRequestRow; refund: RefundStudioRequestResult['kind'] }
  /** The request was already completed or failed (another run settled it first): nothing changed. */
  | { kind: 'already-settled'; status: StudioRequestStatus }
  | { kind: 'not-found' };

const MAX_ERROR_LENGTH = 2_000;

/**
 * Fails an unfinished studio request and refunds its debit, in one transaction: the conditional
 * update (status in `from` → failed) is the fence that lets exactly one settlement win against a
 * concurrent completion or sweep, and the refund reference (`studio:{id}:refund`) is the second
 * fence; its `studio.request.failed` app webhook message commits with them. Idempotent: a request
 * already settled is left as it is. See failStudioRequestInTransaction.
 */
export function failStudioRequest(
  deps: UnitOfWorkDeps,
  id: number,
  failure: StudioFailure,
  options: { from?: readonly StudioRequestStatus[] } = {},
): Promise<FailStudioRequestResult> {
  return inUnitOfWork(deps, (uow) => failStudioRequestInTransaction(uow, id, failure, options));
}

/** failStudioRequest inside the caller's transaction (the sweeper settles a batch in one). */
export async function failStudioRequestInTransaction(
  uow: UnitOfWork,
  id: number,
  failure: StudioFailure,
  options: { from?: readonly StudioRequestStatus[] } = {},
): Promise<FailStudioRequestResult> {
  const { trx } = uow;
  const from = options.from ?? ['received', 'processing'];
  const failed = await trx
    .updateTable('studio_requests')
    .set({
      status: 'failed',
      error_code: failure.code,
      error: failure.message.slice(0, MAX_ERROR_LENGTH),
      next_attempt_at: null,
      failed_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .returningAll()
    .executeTakeFirst();
  if (!failed) {
    const current = await trx.selectFrom('studio_requests').select('status').where('id', '=', id).executeTakeFirst();
    return current ? { kind: 'already-settled', status: current.status } : { kind: 'not-found' };
  }
  const refund = await refundStudioRequest(uow, { id: failed.id, publicId: failed.public_id });
  const request =
    refund.kind === 'no-debit'
      ? failed
      : await trx.selectFrom('studio_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  await writeAppWebhookMessage(uow, studioRequestMessage(request));
  return { kind: 'failed', request, refund: refund.kind };
}
