import type { CatalogData } from './catalog-schema';
import type { FreeAllowance } from './feature-schema';

/** A feature as pricing reads it: every variant as a price per meter (a feature with one `price` has one variant, ''). */
export interface PricedFeature {
  id: string;
  unit: string;
  per: number;
  /** Variant name ('' for a feature priced without variants) → meter → whole tokens per `per`. */
  variants: ReadonlyMap<string, Readonly<Record<string, number>>>;
  /** The allowance's group is the feature's own id when the catalog names none. */
  freeAllowance: (FreeAllowance & { group: string }) | null;
}

/** The studio section's kinds, read as features (product.md: one pricing path). */
export const studioFeatureIds = ['image_edit', 'music_clip', 'music_full'] as const;

/**
 * Every priced feature of a catalog by id: its `features`, and its `studio` section read as the
 * features `image_edit`, `music_clip` and `music_full` (clips and full songs sharing the `music`
 * daily allowance), unless `features` defines one of those ids itself. Pure.
 */
export function featureTableOf(catalog: Pick<CatalogData, 'features' | 'studio'>): ReadonlyMap<string, PricedFeature> {
  const table = new Map<string, PricedFeature>();
  const { studio } = catalog;
  const studioFeature = (id: string, price: number, uses: number, group: string): PricedFeature => ({
    id,
    unit: 'use',
    per: 1,
    variants: new Map([['', { use: price }]]),
    freeAllowance: { per: 'day', uses, group },
  });
  table.set(
    'image_edit',
    studioFeature('image_edit', studio.prices.image_edit, studio.freeDailyAllowance.image_edit, 'image_edit'),
  );
  table.set(
    'music_clip',
    studioFeature('music_clip', studio.prices.music_clip, studio.freeDailyAllowance.music, 'music'),
  );
  table.set(
    'music_full',
    studioFeature('music_full', studio.prices.music_full, studio.freeDailyAllowance.music, 'music'),
  );
  for (const feature of catalog.features) {
    const variants = new Map<string, Record<string, number>>();
    if (feature.price !== undefined) variants.set('', { [feature.unit]: feature.price });
    for (const [variant, prices] of Object.entries(feature.variants ?? {})) {
      variants.set(variant, typeof prices === 'number' ? { [feature.unit]: prices } : prices);
    }
    table.set(feature.id, {
      id: feature.id,
      unit: feature.unit,
      per: feature.per,
      variants,
      freeAllowance: feature.freeAllowance
        ? { ...feature.freeAllowance, group: feature.freeAllowance.group ?? feature.id }
        : null,
    });
  }
  return table;
}
