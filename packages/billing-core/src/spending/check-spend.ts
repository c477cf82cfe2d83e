import type { Kysely } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import { priceUsage, type UsageSpec } from '../catalog/price-usage';
import type { Clock } from '../clock';
import type { DB, StudioKind } from '../db/schema';
import { decideFeatureCharge } from '../feature-uses/decide-feature-charge';
import { readWalletFunds } from '../ledger/held-tokens';
import { listDrawableLots } from '../ledger/lots';
import { readSpendState } from '../spend-limits/read-spend-limits';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import { priceStudioRequest } from '../studio/price-studio-request';
import { decideStudioCharge } from '../studio/studio-charge';

/** What `check` prices: a number of tokens, or the next studio request of a kind. */
export type CheckStudioKind = 'image_edit' | 'music_clip' | 'music_full';

export interface SpendCheck {
  allowed: boolean;
  /** The tokens the spend would debit (a studio request: its cost, 0 on the free tier). */
  amount: number;
  balance: number;
  held: number;
  available: number;
  /**
   * Studio: the price, and whether the free allowance covers the next request. A feature: what
   * the next usage of it would charge (0 inside the free allowance), and whether the allowance covers it.
   */
  cost?: number;
  freeTier?: boolean;
  /** The spend limit the spend would pass (then `allowed` is false), as its 402 would say. */
  spendLimit?: SpendLimitRefusal;
}

/** A check of a feature the catalog does not know (or a bad quantity): 400, as the usage would answer. */
export type FeatureCheckRefusal =
  | { kind: 'unknown-feature'; message: string; known: string[] }
  | { kind: 'invalid'; message: string };

/**
 * Whether a spend of `amount` (or the next studio request of `studioKind`) would go through now
 * (`GET /v1/users/{userId}/check`), without locking or writing anything. It asks the same
 * functions the real spend does: the lots a spend can draw (listDrawableLots: unheld and not
 * expired) and, for a studio request, the free allowance decision (decideStudioCharge) and the
 * catalog price (priceStudioRequest), and the spend limits (spendLimitRefusal). A debit or
 * request made right after, with nothing in between, does what this says.
 */
export async function checkSpend(
  deps: { db: Kysely<DB>; catalog: Catalog; clock: Clock; spendLimits: SpendLimitDefaults },
  request: { userId: string } & ({ amount: number } | { studioKind: CheckStudioKind } | { feature: UsageSpec }),
): Promise<SpendCheck | FeatureCheckRefusal> {
  const { db } = deps;
  const funds = await readWalletFunds(db, request.userId, { lock: false });
  let amount: number;
  let studio: { cost: number; freeTier: boolean } | undefined;
  if ('feature' in request) {
    // The same pricing and allowance decision as recordUsage (features/record-usage.ts).
    const priced = priceUsage(deps.catalog.features, request.feature);
    if (priced.kind === 'unknown') return { kind: 'unknown-feature', message: priced.message, known: priced.known };
    if (priced.kind === 'invalid') return priced;
    const charge = await decideFeatureCharge(db, {
      userId: request.userId,
      feature: priced.feature,
      cost: priced.usage.cost,
      at: deps.clock.now(),
    });
    amount = charge.tokens;
    studio = { cost: charge.tokens, freeTier: charge.freeTier };
  } else if ('studioKind' in request) {
    const price = priceStudioRequest(deps.catalog, studioSpecOf(deps.catalog, request.studioKind));
    const charge = await decideStudioCharge(db, { userId: request.userId, at: deps.clock.now(), price });
    // guard: check-studio-allowance
    amount = charge.tokens;
    studio = { cost: price.priceTokens, freeTier: charge.freeTier };
  } else {
    amount = request.amount;
  }
  const drawable =
    amount === 0
      ? 0
      : (await listDrawableLots(db, request.userId, { spend: true, lock: false })).reduce(
          (sum, lot) => sum + lot.free,
          0,
        );
  const state = amount === 0 ? undefined : await readSpendState(db, request.userId);
  const refusal = state && spendLimitRefusal(state.read, deps.spendLimits, state.held, amount);
  return {
    allowed: amount === 0 || (!refusal && funds.available >= amount && drawable >= amount),
    amount,
    balance: funds.balance,
    held: funds.held,
    available: funds.available,
    ...studio,
    ...(refusal ? { spendLimit: refusal } : {}),
  };
}

/** The studio request a `check` kind stands for (a clip's price does not depend on its length). */
function studioSpecOf(
  catalog: Catalog,
  kind: CheckStudioKind,
): { kind: StudioKind; durationSeconds?: number; full?: boolean } {
  if (kind === 'image_edit') return { kind: 'image_edit' };
  if (kind === 'music_full') return { kind: 'music', full: true };
  return { kind: 'music', durationSeconds: catalog.data.studio.musicClipMaxSeconds };
}
