import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { type CatalogData, catalogSchema, type Plan, type StripePrice, type TokenPack } from './catalog-schema';
import { featureTableOf, type PricedFeature } from './feature-table';

/** The documented example catalog that ships with Tally and is the default CATALOG_PATH. */
export const exampleCatalogPath = path.resolve(__dirname, '../../catalog.example.json');

export class CatalogError extends Error {
  readonly code = 'invalid_catalog';
}

/** The product catalog with the look-ups the handlers need. Immutable once loaded. */
export interface Catalog {
  readonly data: CatalogData;
  /** Names the prices: the catalog's `version`, else the first 12 hex of its file's SHA-256. */
  readonly version: string;
  /** Every priced feature by id, the studio section's kinds included (features/feature-table.ts). */
  readonly features: ReadonlyMap<string, PricedFeature>;
  findTokenPackByRevenueCatProduct(productId: string): TokenPack | undefined;
  findTokenPackById(packId: string): TokenPack | undefined;
  findPlanByRevenueCatProduct(productId: string): Plan | undefined;
  /** The plan and its price entry for a Stripe recurring price id. */
  findPlanByStripePrice(priceId: string): { plan: Plan; price: StripePrice } | undefined;
  findTokenPackByStripePrice(priceId: string): TokenPack | undefined;
  /** The stores, directly (docs/stores.md): a pack or plan by its App Store or Google Play product id. */
  findTokenPackByStoreProduct(store: StoreName, productId: string): TokenPack | undefined;
  /** Google Play ids may be `subscriptionId:basePlanId`; the catalog may list either form. */
  findPlanByStoreProduct(store: StoreName, productId: string): Plan | undefined;
}

/** The stores Tally reads directly. */
export type StoreName = 'appStore' | 'googlePlay';
const storeProductsKey = { appStore: 'appStoreProducts', googlePlay: 'googlePlayProducts' } as const;

/**
 * Validates a catalog and builds its look-ups. `text`: the file's bytes as read, for the default
 * version (without it, the JSON of `input`).
 */
export function toCatalog(input: unknown, source = 'catalog', text?: string): Catalog {
  const parsed = catalogSchema.safeParse(input);
  if (!parsed.success) {
    throw new CatalogError(`${source} is not a valid catalog:\n${z.prettifyError(parsed.error)}`);
  }
  const data = parsed.data;
  const packsByRevenueCatProduct = new Map<string, TokenPack>();
  const packsById = new Map<string, TokenPack>();
  for (const pack of data.tokenPacks) {
    packsById.set(pack.id, pack);
    for (const product of pack.revenuecatProducts) packsByRevenueCatProduct.set(product, pack);
  }
  const plansByRevenueCatProduct = new Map<string, Plan>();
  for (const plan of data.plans) {
    for (const product of plan.revenuecatProducts) plansByRevenueCatProduct.set(product, plan);
  }
  const plansByStripePrice = new Map<string, { plan: Plan; price: StripePrice }>();
  for (const plan of data.plans) {
    for (const price of plan.stripePrices) plansByStripePrice.set(price.priceId, { plan, price });
  }
  const packsByStripePrice = new Map<string, TokenPack>();
  for (const pack of data.tokenPacks) {
    if (pack.stripePriceId !== undefined) packsByStripePrice.set(pack.stripePriceId, pack);
  }
  const byStoreProduct = <T extends Plan | TokenPack>(items: readonly T[]) => {
    const maps = { appStore: new Map<string, T>(), googlePlay: new Map<string, T>() };
    for (const item of items) {
      for (const store of ['appStore', 'googlePlay'] as const) {
        for (const product of item[storeProductsKey[store]]) maps[store].set(product, item);
      }
    }
    return maps;
  };
  const packsByStoreProduct = byStoreProduct(data.tokenPacks);
  const plansByStoreProduct = byStoreProduct(data.plans);
  const version =
    data.version ??
    createHash('sha256')
      .update(text ?? JSON.stringify(input))
      .digest('hex')
      .slice(0, 12);
  return {
    data,
    version,
    features: featureTableOf(data),
    findPlanByStripePrice: (priceId) => plansByStripePrice.get(priceId),
    findTokenPackByStripePrice: (priceId) => packsByStripePrice.get(priceId),
    findTokenPackByRevenueCatProduct: (productId) => packsByRevenueCatProduct.get(productId),
    findTokenPackById: (packId) => packsById.get(packId),
    findTokenPackByStoreProduct: (store, productId) => packsByStoreProduct[store].get(productId),
    findPlanByStoreProduct: (store, productId) =>
      plansByStoreProduct[store].get(productId) ?? plansByStoreProduct[store].get(productId.split(':')[0] ?? ''),
    // Play Store product ids look like `subscription_id:base_plan_id`; the catalog may list either.
    findPlanByRevenueCatProduct: (productId) =>
      plansByRevenueCatProduct.get(productId) ?? plansByRevenueCatProduct.get(productId.split(':')[0] ?? ''),
  };
}

/** Reads and validates a catalog file. Throws CatalogError with every problem listed. */
export function loadCatalog(filePath: string): Catalog {
  let text: string;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (error) {
    throw new CatalogError(`cannot read catalog ${filePath}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CatalogError(`catalog ${filePath} is not JSON: ${(error as Error).message}`);
  }
  return toCatalog(json, `catalog ${filePath}`, text);
}
