/**
 * The prices the model charges, written from the example catalog the real system loads
 * (packages/billing-core/catalog.example.json, its `features`) and the contract's pricing rule
 * (product.md "Features and prices"): `cost = ceil(Σ quantity × price / per)`, a free allowance of
 * `uses` per UTC day shared by a group. Written out here, not read from the file, so the model
 * shares nothing with the system but the configuration's numbers.
 */
export interface ModelFeature {
  per: number;
  /** Price per meter of each variant (`''`: a feature without variants). */
  variants: Record<string, Record<string, number>>;
  /** Free uses per UTC day, shared by the features of the group. */
  allowance: { group: string; uses: number } | null;
}

export const FEATURES: Record<string, ModelFeature> = {
  video: { per: 1, variants: { '': { second: 2 } }, allowance: null },
  chat: {
    per: 1000,
    variants: { small: { input: 1, output: 2 }, large: { input: 8, output: 24 } },
    allowance: null,
  },
  caption: { per: 1, variants: { '': { use: 3 } }, allowance: { group: 'text', uses: 2 } },
  summary: { per: 1, variants: { '': { use: 4 } }, allowance: { group: 'text', uses: 2 } },
};

export function featureOf(name: string): ModelFeature {
  const feature = FEATURES[name];
  if (!feature) throw new Error(`model: no feature ${name}`);
  return feature;
}

/** What the quantities cost at a feature's prices (whole tokens, rounded up). */
export function costOf(spec: { feature: string; variant: string | null; quantities: Record<string, number> }): number {
  const feature = featureOf(spec.feature);
  const prices = feature.variants[spec.variant ?? ''];
  if (!prices) throw new Error(`model: no variant ${spec.variant} of ${spec.feature}`);
  let units = 0;
  for (const [meter, quantity] of Object.entries(spec.quantities)) units += quantity * (prices[meter] ?? 0);
  return Math.ceil(units / feature.per);
}
