import { sql } from 'kysely';
import { writeAppWebhookMessage } from '../app-webhooks/write-app-webhook-message';
import type { StudioRequestRow, StudioRequestStatus } from '../db/schema';
import { inUnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { studioRequestMessage } from './studio-request-message';

export type CompleteStudioRequestResult =
  | { kind: 'completed'; request: StudioRequestRow }
  /**
   * The request was no longer processing (the sweeper failed and refunded it while the AI call
   * ran): the result is discarded, so a request is never both refunded and charged.
   */
  | { kind: 'discarded'; status: StudioRequestStatus }
  | { kind: 'not-found' };

/**
 * Stores the AI result and marks the request completed. A conditional update on
 * status = 'processing': it loses to a sweep that already failed (and refunded) the request.
 * Writes its `studio.request.completed` app webhook message in the same transaction. Idempotent;
 * moves no money (the debit was taken when the request was created).
 */
export async function completeStudioRequest(
  deps: UnitOfWorkDeps,
  id: number,
  result: unknown,
): Promise<CompleteStudioRequestResult> {
  return inUnitOfWork(deps, async (uow) => {
    const { trx } = uow;
    const completed = await trx
      .updateTable('studio_requests')
      .set({
        status: 'completed',
        result: JSON.stringify(result ?? null),
        error_code: null,
        error: null,
        completed_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', '=', 'processing')
      .returningAll()
      .executeTakeFirst();
    if (completed) {
      await writeAppWebhookMessage(uow, studioRequestMessage(completed));
      return { kind: 'completed', request: completed };
    }
    const current = await trx.selectFrom('studio_requests').select('status').where('id', '=', id).executeTakeFirst();
    return current ? { kind: 'discarded', status: current.status } : { kind: 'not-found' };
  });
}
