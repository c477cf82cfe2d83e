import { sql } from 'kysely';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/**
 * The uses of holds by estimate that ended without a capture (released, or lapsed) no longer count
 * against the free allowance (docs/features.md: it counts uses that succeeded). In the unit that
 * ends them, under the wallet lock.
 */
export async function giveBackHoldUses(uow: UnitOfWork, holdIds: readonly string[]): Promise<void> {
  if (holdIds.length === 0) return;
  await sql`UPDATE feature_uses SET given_back = true
             WHERE source = 'hold' AND reference = ANY(${[...holdIds]}::text[])`.execute(uow.trx);
}
