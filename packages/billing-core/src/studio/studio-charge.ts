import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import type { StudioPrice } from './price-studio-request';

/** What the next studio request of a price costs a user: free (the daily allowance) or its price. */
export interface StudioCharge {
  freeTier: boolean;
  /** Tokens it debits: 0 on the free tier, else the price. */
  tokens: number;
}

/**
 * The free allowance decision (docs/studio): per user, allowance kind and UTC day, counting free
 * requests that did not fail (a failed free generation gives its slot back). The one function
 * behind both createStudioRequest (under the user's advisory lock, so two requests cannot both
 * take the last slot) and `check` (a read), so they cannot disagree.
 */
export async function decideStudioCharge(
  db: Kysely<DB>,
  request: { userId: string; usageDay: string; price: StudioPrice },
): Promise<StudioCharge> {
  const used = await db
    .selectFrom('studio_requests')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('user_id', '=', request.userId)
    .where('usage_day', '=', request.usageDay)
    .where('kind', '=', request.price.allowanceKind)
    .where('free_tier', '=', true)
    .where('status', '<>', 'failed')
    .executeTakeFirstOrThrow();
  const freeTier = Number(used.count) < request.price.allowancePerDay;
  return { freeTier, tokens: freeTier ? 0 : request.price.priceTokens };
}
