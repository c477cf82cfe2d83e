import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

export interface StrandedClaimOptions {
  /** A received row whose last hand-off to the queue is older than this is enqueued again. */
  staleAfterMs: number;
  /** A row stuck in processing this long (its worker died) is enqueued again. */
  processingStaleAfterMs: number;
  batchSize: number;
}

/**
 * Claims rows that need work but may have no job in the queue: never enqueued, hand-off failed,
 * Redis lost its jobs, or a worker died mid-run. Marks them enqueued now and returns their ids
 * for the caller to enqueue. Uses FOR UPDATE SKIP LOCKED so any number of relay loops can run;
 * the database clock decides staleness. Re-enqueuing a row that still has a live job is harmless
 * (the queue ignores a duplicate job id, and processing is idempotent).
 */
export async function claimStrandedInboxEvents(db: Kysely<DB>, options: StrandedClaimOptions): Promise<number[]> {
  const rows = await sql<{ id: number }>`
    UPDATE inbox_events SET enqueued_at = now()
     WHERE id IN (
       SELECT id FROM inbox_events
        WHERE (status = 'received'
               AND (enqueued_at IS NULL
                    OR enqueued_at < now() - make_interval(secs => ${options.staleAfterMs / 1000})))
           OR (status = 'processing'
               AND updated_at < now() - make_interval(secs => ${options.processingStaleAfterMs / 1000})
               AND (enqueued_at IS NULL
                    OR enqueued_at < now() - make_interval(secs => ${options.processingStaleAfterMs / 1000})))
        ORDER BY id
        LIMIT ${options.batchSize}
        FOR UPDATE SKIP LOCKED)
    RETURNING id`.execute(db);
  return rows.rows.map((row) => row.id).sort((a, b) => a - b);
}

/** Age in seconds of the oldest row still waiting to be processed, or 0. For the backlog gauge. */
export async function findOldestPendingAgeSeconds(db: Kysely<DB>): Promise<number> {
  const row = await sql<{ age: number | null }>`
    SELECT extract(epoch FROM now() - min(received_at))::float8 AS age
      FROM inbox_events WHERE status IN ('received', 'processing')`.execute(db);
  return row.rows[0]?.age ?? 0;
}
