import { type Kysely, sql } from 'kysely';
import type { DB } from './schema';

export type AdvisoryTryLockResult<T> = { kind: 'ran'; value: T } | { kind: 'busy' };

/**
 * Runs `work` only if this session can take the Postgres advisory lock `key` at once
 * (`pg_try_advisory_lock`), so of several processes asking together exactly one runs and the
 * others get `busy` without waiting. The lock is session-level on one connection pinned for the
 * duration, and no transaction is held open, so `work` may call third parties; it is released
 * when `work` settles, and by Postgres if the process or its connection dies. `work` itself uses
 * the pool as usual. Rethrows what `work` throws (after unlocking).
 */
export async function runWithAdvisoryTryLock<T>(
  db: Kysely<DB>,
  key: number,
  work: () => Promise<T>,
): Promise<AdvisoryTryLockResult<T>> {
  return db.connection().execute(async (session) => {
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${key}::bigint) AS locked`.execute(
      session,
    );
    if (!rows[0]?.locked) return { kind: 'busy' } as const;
    try {
      return { kind: 'ran', value: await work() } as const;
    } finally {
      await sql`SELECT pg_advisory_unlock(${key}::bigint)`.execute(session);
    }
  });
}
