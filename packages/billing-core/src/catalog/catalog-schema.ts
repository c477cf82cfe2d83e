import { z } from 'zod';
import { checkFeatures, featureSchema } from './feature-schema';

const productId = z.string().trim().min(1).max(255);
const positiveTokens = z.number().int().positive();

const stripePriceSchema = z
  .object({
    priceId: productId,
    interval: z.enum(['month', 'year']),
    creditsPerPeriod: positiveTokens,
    /** When its period credits expire (docs/lots.md): never, or when the period they were granted for ends. */
    creditsExpire: z.enum(['never', 'period_end']).default('never'),
    /** Unspent tokens a `period_end` lot carries into a new lot when it expires (docs/lots.md). */
    rolloverMax: z.number().int().min(0).default(0),
  })
  .refine((price) => price.interval !== 'year' || price.creditsPerPeriod % 12 === 0, {
    message: 'an annual price grants creditsPerPeriod / 12 per month, so it must be a multiple of 12',
    path: ['creditsPerPeriod'],
  });

const planSchema = z.object({
  id: productId,
  revenuecatProducts: z.array(productId).default([]),
  stripePrices: z.array(stripePriceSchema).default([]),
  /** App Store product ids of the plan's auto-renewable subscriptions (docs/stores.md). */
  appStoreProducts: z.array(productId).default([]),
  /** Google Play subscription product ids (`subscriptionId`, or `subscriptionId:basePlanId`). */
  googlePlayProducts: z.array(productId).default([]),
});

const tokenPackSchema = z.object({
  id: productId,
  tokens: positiveTokens,
  revenuecatProducts: z.array(productId).default([]),
  /** App Store product ids of the pack (consumables; docs/stores.md). */
  appStoreProducts: z.array(productId).default([]),
  /** Google Play one-time product ids (SKUs) of the pack. */
  googlePlayProducts: z.array(productId).default([]),
  stripePriceId: productId.optional(),
  amountMinor: z.number().int().positive().optional(),
  currency: z
    .string()
    .regex(/^[a-z]{3}$/, 'a lowercase ISO 4217 code such as "usd"')
    .optional(),
});

const studioSchema = z.object({
  freeDailyAllowance: z.object({ image_edit: z.number().int().min(0), music: z.number().int().min(0) }),
  prices: z.object({ image_edit: positiveTokens, music_clip: positiveTokens, music_full: positiveTokens }),
  musicClipMaxSeconds: z.number().int().positive(),
});

export const catalogSchema = z
  .object({
    plans: z.array(planSchema),
    tokenPacks: z.array(tokenPackSchema),
    studio: studioSchema,
    /** What the app spends tokens on, priced here (docs/features.md). */
    features: z.array(featureSchema).default([]),
    /** Names the prices; default the first 12 hex of the catalog file's SHA-256 (toCatalog). */
    version: z.string().trim().min(1).max(64).optional(),
  })
  .superRefine((catalog, ctx) => {
    checkFeatures(catalog.features, ctx, ['features']);
    const seen = new Map<string, string>();
    const claim = (kind: string, key: string, owner: string, path: (string | number)[]) => {
      const id = `${kind}:${key}`;
      const previous = seen.get(id);
      if (previous !== undefined) {
        ctx.addIssue({ code: 'custom', path, message: `${kind} "${key}" is used by both ${previous} and ${owner}` });
      }
      seen.set(id, owner);
    };
    for (const [i, plan] of catalog.plans.entries()) {
      claim('plan id', plan.id, `plan ${plan.id}`, ['plans', i, 'id']);
      for (const [j, product] of plan.revenuecatProducts.entries()) {
        claim('RevenueCat product', product, `plan ${plan.id}`, ['plans', i, 'revenuecatProducts', j]);
      }
      for (const [j, product] of plan.appStoreProducts.entries()) {
        claim('App Store product', product, `plan ${plan.id}`, ['plans', i, 'appStoreProducts', j]);
      }
      for (const [j, product] of plan.googlePlayProducts.entries()) {
        claim('Google Play product', product, `plan ${plan.id}`, ['plans', i, 'googlePlayProducts', j]);
      }
      for (const [j, price] of plan.stripePrices.entries()) {
        claim('Stripe price', price.priceId, `plan ${plan.id}`, ['plans', i, 'stripePrices', j, 'priceId']);
      }
    }
    for (const [i, pack] of catalog.tokenPacks.entries()) {
      claim('token pack id', pack.id, `pack ${pack.id}`, ['tokenPacks', i, 'id']);
      for (const [j, product] of pack.revenuecatProducts.entries()) {
        claim('RevenueCat product', product, `pack ${pack.id}`, ['tokenPacks', i, 'revenuecatProducts', j]);
      }
      for (const [j, product] of pack.appStoreProducts.entries()) {
        claim('App Store product', product, `pack ${pack.id}`, ['tokenPacks', i, 'appStoreProducts', j]);
      }
      for (const [j, product] of pack.googlePlayProducts.entries()) {
        claim('Google Play product', product, `pack ${pack.id}`, ['tokenPacks', i, 'googlePlayProducts', j]);
      }
      if (pack.stripePriceId !== undefined) {
        claim('Stripe price', pack.stripePriceId, `pack ${pack.id}`, ['tokenPacks', i, 'stripePriceId']);
      }
      if ((pack.amountMinor === undefined) !== (pack.currency === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['tokenPacks', i], message: 'amountMinor and currency go together' });
      }
      // Fail closed: a pack sold through Stripe is credited only when Stripe received its price.
      if (pack.stripePriceId !== undefined && pack.amountMinor === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['tokenPacks', i],
          message: 'a pack with a stripePriceId needs amountMinor and currency (what Stripe must receive)',
        });
      }
    }
  });

export type CatalogInput = z.input<typeof catalogSchema>;
export type CatalogData = z.output<typeof catalogSchema>;
export type Plan = CatalogData['plans'][number];
export type TokenPack = CatalogData['tokenPacks'][number];
export type StripePrice = Plan['stripePrices'][number];
