import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Seconds since the oldest unfinished inbox row became due (received, or its backoff or wait
 * ended), or 0. Rows waiting out a delay are not late yet. For the backlog gauge and its alert.
 */
export async function findOldestDueAgeSeconds(db: Kysely<DB>): Promise<number> {
  const row = await sql<{ age: number | null }>`
    SELECT extract(epoch FROM now() - min(coalesce(next_attempt_at, received_at)))::float8 AS age
      FROM inbox_events
     WHERE status IN ('received', 'processing')
       AND (next_attempt_at IS NULL OR next_attempt_at <= now())`.execute(db);
  return Math.max(0, row.rows[0]?.age ?? 0);
}
