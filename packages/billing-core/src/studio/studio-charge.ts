import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { decideFeatureCharge } from '../feature-uses/decide-feature-charge';
import type { StudioPrice } from './price-studio-request';

/** What the next studio request of a price costs a user: free (the allowance) or its price. */
export interface StudioCharge {
  freeTier: boolean;
  /** Tokens it debits: 0 on the free tier, else the price. */
  tokens: number;
  /** The allowance group it counts against (null: its feature has none). */
  allowanceGroup: string | null;
}

/**
 * The free allowance decision of a studio request: its feature's, through the one decision of
 * every priced use (decideFeatureCharge, docs/features.md), so a studio request and a usage of a
 * feature of the same group share one allowance and cannot disagree. Behind both
 * createStudioRequest (under the user's advisory lock, so two requests cannot both take the last
 * slot) and `check` (a read).
 */
export async function decideStudioCharge(
  db: Kysely<DB>,
  request: { userId: string; at: Date; price: StudioPrice },
): Promise<StudioCharge> {
  const charge = await decideFeatureCharge(db, {
    userId: request.userId,
    feature: request.price.feature,
    cost: request.price.priceTokens,
    at: request.at,
  });
  return { freeTier: charge.freeTier, tokens: charge.tokens, allowanceGroup: charge.allowance?.group ?? null };
}
