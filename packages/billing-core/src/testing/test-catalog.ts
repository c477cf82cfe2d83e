import { type Catalog, toCatalog } from '../catalog/catalog';

/**
 * The input of a catalog for tests: no plans or token packs, the example catalog's studio prices.
 * Spread it and add what a test is about.
 */
export const testCatalogInput = {
  plans: [],
  tokenPacks: [],
  studio: {
    freeDailyAllowance: { image_edit: 5, music: 2 },
    prices: { image_edit: 5, music_clip: 5, music_full: 15 },
    musicClipMaxSeconds: 30,
  },
};

/** A catalog for tests: testCatalogInput with `parts` (features, a version, …) over it. */
export function testCatalog(parts: Record<string, unknown> = {}): Catalog {
  return toCatalog({ ...testCatalogInput, ...parts });
}
