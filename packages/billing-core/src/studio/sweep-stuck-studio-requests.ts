import { sqlMilliseconds } from '@tally/platform/db';
import { sql } from 'kysely';
import { inUnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { failStudioRequestInTransaction } from './fail-studio-request';
import type { RefundStudioRequestResult } from './refund-studio-request';

export interface SweepStudioOptions {
  /** A request processing (not updated) this long is failed and refunded. Must exceed the AI timeout. */
  stuckAfterMs: number;
  batchSize: number;
}

export interface SweptStudioRequest {
  id: number;
  publicId: string;
  refund: RefundStudioRequestResult['kind'];
}

/**
 * Fails and refunds studio requests stuck in processing longer than stuckAfterMs (database
 * clock): their worker died, or lost its connection, after the claim. One batch per call,
 * claimed FOR UPDATE SKIP LOCKED so any number of sweepers may run; each failure is the same
 * conditional update + refund reference as the worker's, so a late AI answer loses (its
 * completion finds the request failed and is discarded) and nothing is refunded twice.
 */
export async function sweepStuckStudioRequests(
  deps: UnitOfWorkDeps,
  options: SweepStudioOptions,
): Promise<SweptStudioRequest[]> {
  return inUnitOfWork(deps, async (uow) => {
    const { trx } = uow;
    const stuck = await trx
      .selectFrom('studio_requests')
      .select(['id', 'public_id', 'updated_at'])
      .where('status', '=', 'processing')
      .where('updated_at', '<', sql<Date>`now() - ${sqlMilliseconds(options.stuckAfterMs)}`)
      .orderBy('id')
      .limit(options.batchSize)
      .forUpdate()
      .skipLocked()
      .execute();
    const swept: SweptStudioRequest[] = [];
    for (const row of stuck) {
      const failed = await failStudioRequestInTransaction(
        uow,
        row.id,
        {
          code: 'stuck',
          message: `processing since ${row.updated_at.toISOString()} without an outcome (worker died or lost its connection); failed and refunded by the sweeper`,
        },
        { from: ['processing'] },
      );
      if (failed.kind === 'failed') swept.push({ id: row.id, publicId: row.public_id, refund: failed.refund });
    }
    return swept;
  });
}
