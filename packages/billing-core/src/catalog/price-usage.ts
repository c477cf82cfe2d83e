import type { PricedFeature } from './feature-table';

/** What an app says it used: one meter (`quantity`) or several (`quantities`), of a feature and maybe a variant. */
export interface UsageSpec {
  feature: string;
  variant?: string | undefined;
  quantity?: number | undefined;
  quantities?: Readonly<Record<string, number>> | undefined;
}

/** A usage priced: the quantities per meter, the prices it was charged at, and its cost before any free allowance. */
export interface PricedUsage {
  feature: string;
  /** null for a feature priced without variants. */
  variant: string | null;
  quantities: Record<string, number>;
  /** Whole tokens per `per` units of each meter the usage names. */
  prices: Record<string, number>;
  per: number;
  /** ceil(Σ quantity × price / per). */
  cost: number;
}

export type PriceUsageResult =
  | { kind: 'priced'; usage: PricedUsage; feature: PricedFeature }
  /** An unknown feature, variant or meter (400 unknown_feature): `known` lists what there is. */
  | { kind: 'unknown'; message: string; known: string[] }
  /** A quantity that is not a whole number of zero or more, or neither/both of quantity and quantities (400 invalid_request). */
  | { kind: 'invalid'; message: string };

/**
 * Prices a usage from the catalog's feature table (docs/features.md): the variant's prices (a
 * feature without variants takes none; one with variants needs one), each named meter's
 * quantity × price, summed and divided by `per`, rounded up to a whole token. A feature of one
 * meter takes `quantity` (default 1 for a feature counted in uses); `quantities` names meters.
 * Pure, and the one pricing function of usage, holds by estimate, captures, `check` and AI Studio.
 */
export function priceUsage(table: ReadonlyMap<string, PricedFeature>, spec: UsageSpec): PriceUsageResult {
  const feature = table.get(spec.feature);
  if (!feature) {
    return { kind: 'unknown', message: `no feature "${spec.feature}"`, known: [...table.keys()].sort() };
  }
  const variants = [...feature.variants.keys()].filter((v) => v !== '');
  let variantKey: string;
  if (variants.length === 0) {
    if (spec.variant !== undefined) {
      return { kind: 'unknown', message: `feature ${feature.id} has no variants`, known: [] };
    }
    variantKey = '';
  } else {
    if (spec.variant === undefined || !feature.variants.has(spec.variant)) {
      const what = spec.variant === undefined ? 'needs a variant' : `has no variant "${spec.variant}"`;
      return { kind: 'unknown', message: `feature ${feature.id} ${what}`, known: variants.sort() };
    }
    variantKey = spec.variant;
  }
  const prices = feature.variants.get(variantKey) ?? {};
  const cost = costAtPrices({ feature: feature.id, prices, per: feature.per, unit: feature.unit }, spec);
  if (cost.kind !== 'priced') return cost;
  const charged = Object.fromEntries(Object.keys(cost.quantities).map((meter) => [meter, prices[meter] ?? 0]));
  return {
    kind: 'priced',
    feature,
    usage: {
      feature: feature.id,
      variant: variantKey === '' ? null : variantKey,
      quantities: cost.quantities,
      prices: charged,
      per: feature.per,
      cost: cost.cost,
    },
  };
}

/**
 * What quantities cost at given prices (a variant's, or the ones a hold by estimate kept):
 * `ceil(Σ quantity × price / per)` in integers. `quantity` is for one meter (default 1 when the
 * unit is a use); `quantities` must name only priced meters. Pure.
 */
export function costAtPrices(
  priced: { feature: string; prices: Readonly<Record<string, number>>; per: number; unit?: string },
  spec: { quantity?: number | undefined; quantities?: Readonly<Record<string, number>> | undefined },
):
  | { kind: 'priced'; quantities: Record<string, number>; cost: number }
  | { kind: 'unknown'; message: string; known: string[] }
  | { kind: 'invalid'; message: string } {
  const { prices } = priced;
  const meters = Object.keys(prices);
  if (spec.quantity !== undefined && spec.quantities !== undefined) {
    return { kind: 'invalid', message: 'give quantity or quantities, not both' };
  }
  let quantities: Record<string, number>;
  if (spec.quantities !== undefined) {
    quantities = { ...spec.quantities };
    const unknown = Object.keys(quantities).filter((meter) => !(meter in prices));
    if (unknown.length > 0) {
      return {
        kind: 'unknown',
        message: `feature ${priced.feature} has no meter "${unknown[0]}"`,
        known: meters.sort(),
      };
    }
    if (Object.keys(quantities).length === 0) return { kind: 'invalid', message: 'quantities names no meter' };
  } else {
    if (meters.length !== 1) {
      return {
        kind: 'unknown',
        message: `feature ${priced.feature} has several meters: give quantities`,
        known: meters.sort(),
      };
    }
    const meter = meters[0] as string;
    const quantity = spec.quantity ?? ((priced.unit ?? meter) === 'use' ? 1 : undefined);
    if (quantity === undefined)
      return { kind: 'invalid', message: `give the quantity of ${priced.unit ?? meter}s used` };
    quantities = { [meter]: quantity };
  }
  let total = 0;
  for (const [meter, quantity] of Object.entries(quantities)) {
    if (!Number.isSafeInteger(quantity) || quantity < 0) {
      return { kind: 'invalid', message: `the quantity of ${meter} must be a whole number of zero or more` };
    }
    total += quantity * (prices[meter] ?? 0);
  }
  if (!Number.isSafeInteger(total)) return { kind: 'invalid', message: 'the quantities are too large' };
  // Whole tokens, rounded up, in integers (a float division can round onto a whole number).
  // guard: usage-cost-rounds-up
  return { kind: 'priced', quantities, cost: Number((BigInt(total) + BigInt(priced.per) - 1n) / BigInt(priced.per)) };
}
