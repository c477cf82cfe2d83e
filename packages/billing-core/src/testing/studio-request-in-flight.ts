import { type Kysely, sql } from 'kysely';
import { studioUserLock } from '../db/lock-studio-user';
import type { DB } from '../db/schema';

/**
 * A studio request of `userId` in flight while `run` runs, as AI Studio takes a free slot: its
 * transaction holds the user's studio lock and has written its free use of `group` on `day`
 * (feature_uses, uncommitted), then, once `run` has had its chance, takes the user's wallet and
 * commits. Answers `run`'s result and whether `otherDone` (polled meanwhile: another user's work
 * of the same call written) came true before `run` ended, i.e. without waiting for the request.
 */
export async function withStudioRequestInFlight<T>(
  db: Kysely<DB>,
  request: { userId: string; group: string; day: string; priceVersion: string },
  run: () => Promise<T>,
  otherDone: () => Promise<boolean>,
): Promise<{ result: T; otherDoneFirst: boolean }> {
  const { userId, group, day, priceVersion } = request;
  return db.connection().execute(async (connection) => {
    await sql`BEGIN`.execute(connection);
    await sql`SELECT ${studioUserLock(userId)}`.execute(connection);
    await sql`
      INSERT INTO feature_uses (user_id, source, reference, feature, variant, quantities, prices, per, price_version,
                                cost, free_tier, allowance_group, allowance_period, answer_balance, answer_available, usage_day)
      VALUES (${userId}, 'usage', ${`${userId}-studio`}, 'caption', NULL, '{"use":1}', '{"use":4}', 1, ${priceVersion},
              0, true, ${group}, ${day}, 50, 50, ${day}::date)`.execute(connection);
    const running = run();
    const first = await Promise.race([
      running.then(() => 'run'),
      (async () => {
        for (let tries = 0; tries < 100; tries += 1) {
          if (await otherDone()) return 'other';
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return 'neither';
      })(),
    ]);
    // Then the request takes the wallet (nothing of `run` may hold it by now) and commits.
    await sql`SELECT balance FROM wallets WHERE user_id = ${userId} FOR UPDATE`.execute(connection);
    await sql`COMMIT`.execute(connection);
    return { result: await running, otherDoneFirst: first === 'other' };
  });
}
