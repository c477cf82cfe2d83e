import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { DB, StudioRequestRow } from '../db/schema';

/**
 * received → processing, attempts + 1 (an attempt counts when it starts). Only a `received` row
 * is claimed: a row found in `processing` belongs to a running or dead worker, and a dead one's
 * request may already have reached the AI service, so it is never run again; the sweeper fails
 * and refunds it instead. Returns undefined when the row is not claimable.
 */
export async function claimStudioRequest(db: Kysely<DB>, id: number): Promise<StudioRequestRow | undefined> {
  return db
    .updateTable('studio_requests')
    .set({ status: 'processing', attempts: sql`attempts + 1`, next_attempt_at: null, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', 'received')
    .returningAll()
    .executeTakeFirst();
}

/**
 * processing → received, due again after delayMs: for a failure that is safe to retry (the AI
 * service was never reached). The error is kept on the row.
 */
export async function rescheduleStudioRequest(
  db: Kysely<DB>,
  id: number,
  delayMs: number,
  failure: { code: string; message: string },
): Promise<StudioRequestRow | undefined> {
  return db
    .updateTable('studio_requests')
    .set({
      status: 'received',
      error_code: failure.code,
      error: failure.message.slice(0, 2_000),
      next_attempt_at: sql`now() + ${sqlMilliseconds(delayMs)}`,
      enqueued_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .returningAll()
    .executeTakeFirst();
}
