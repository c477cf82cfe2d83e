import { z } from 'zod';

/** A feature, variant or meter name: what apps send, so short and plain. */
const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, '1 to 64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)');
/** Whole tokens per `per` units: never negative (0 is a free meter). */
const price = z.number().int().min(0, 'a price is never negative');

/** A variant's prices: one number (the feature's one meter, named by its unit), or a price per meter. */
const variantPrices = z.union([
  price,
  z
    .record(name, price)
    .refine((meters) => Object.keys(meters).length > 0, { message: 'a variant needs at least one meter' }),
]);

const freeAllowanceSchema = z.strictObject({
  /** The allowance resets at each UTC day or calendar month (UTC). */
  per: z.enum(['day', 'month']),
  /** Uses that succeeded inside the period before a use costs its price. */
  uses: z.number().int().min(0),
  /** Features of one group share the allowance (every feature of a group must agree on per and uses). */
  group: name.optional(),
});

/**
 * A priced feature of the catalog (docs/features.md, product.md "Features and prices"): whole tokens
 * per `per` (default 1) of its `unit` (default `use`), one `price`, or a price per variant (a model,
 * a quality), each variant one price or a price per meter (`input`, `output`).
 */
export const featureSchema = z
  .strictObject({
    id: name,
    unit: name.default('use'),
    per: z.number().int().positive().default(1),
    price: price.optional(),
    variants: z.record(name, variantPrices).optional(),
    freeAllowance: freeAllowanceSchema.optional(),
  })
  .superRefine((feature, ctx) => {
    if ((feature.price === undefined) === (feature.variants === undefined)) {
      ctx.addIssue({ code: 'custom', message: `feature ${feature.id} needs exactly one of price or variants` });
    }
    if (feature.variants !== undefined && Object.keys(feature.variants).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['variants'], message: `feature ${feature.id} lists no variant` });
    }
  });

export type FeatureInput = z.input<typeof featureSchema>;
export type FeatureData = z.output<typeof featureSchema>;
export type FreeAllowance = z.output<typeof freeAllowanceSchema>;

/**
 * The catalog's features checked together: ids unique, and the features of one allowance group
 * agreeing on its period and uses (a group is one allowance).
 */
export function checkFeatures(features: readonly FeatureData[], ctx: z.RefinementCtx, path: (string | number)[]): void {
  const seen = new Set<string>();
  const groups = new Map<string, { per: string; uses: number; feature: string }>();
  for (const [i, feature] of features.entries()) {
    if (seen.has(feature.id)) {
      ctx.addIssue({ code: 'custom', path: [...path, i, 'id'], message: `feature "${feature.id}" is listed twice` });
    }
    seen.add(feature.id);
    const allowance = feature.freeAllowance;
    if (allowance?.group === undefined) continue;
    const first = groups.get(allowance.group);
    if (!first) {
      groups.set(allowance.group, { per: allowance.per, uses: allowance.uses, feature: feature.id });
    } else if (first.per !== allowance.per || first.uses !== allowance.uses) {
      ctx.addIssue({
        code: 'custom',
        path: [...path, i, 'freeAllowance'],
        message: `free allowance group "${allowance.group}" is ${first.uses} per ${first.per} in feature ${first.feature}, so it must be here too`,
      });
    }
  }
}
