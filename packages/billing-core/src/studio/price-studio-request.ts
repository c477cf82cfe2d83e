import type { Catalog } from '../catalog/catalog';
import type { PricedFeature } from '../catalog/feature-table';
import { priceUsage } from '../catalog/price-usage';
import type { StudioKind } from '../db/schema';
import { BillingError } from '../errors';

export interface StudioRequestSpec {
  kind: StudioKind;
  /** Music only: the clip length; required for a clip, optional for a full song. */
  durationSeconds?: number | undefined;
  /** Music only: a full song instead of a clip. */
  full?: boolean | undefined;
}

/** The feature a studio request is a use of. */
export type StudioPriceKey = 'image_edit' | 'music_clip' | 'music_full';

export interface StudioPrice {
  priceKey: StudioPriceKey;
  /** The feature's price of one use (features/price-usage.ts). */
  priceTokens: number;
  /** The feature, for the allowance decision (decideStudioCharge). */
  feature: PricedFeature;
}

/** The request asks for something the catalog does not sell (a clip over the limit, a full image edit). */
export class InvalidStudioRequestError extends BillingError {
  constructor(message: string) {
    super('invalid_request', message, { retryable: false });
  }
}

/**
 * What a generation costs: an image edit, a music clip up to the studio section's
 * musicClipMaxSeconds, or a full song (`full: true`) is one use of the feature `image_edit`,
 * `music_clip` or `music_full`, priced by the one pricing path of every feature (priceUsage over
 * the catalog's feature table, where the studio section is read as those features, clips and full
 * songs sharing the `music` allowance). Pure. Throws InvalidStudioRequestError for a request the
 * catalog does not price.
 */
export function priceStudioRequest(catalog: Pick<Catalog, 'data' | 'features'>, spec: StudioRequestSpec): StudioPrice {
  const priceKey = studioFeatureOf(catalog.data.studio.musicClipMaxSeconds, spec);
  const priced = priceUsage(catalog.features, { feature: priceKey });
  if (priced.kind !== 'priced')
    throw new InvalidStudioRequestError(`the catalog cannot price ${priceKey}: ${priced.message}`);
  return { priceKey, priceTokens: priced.usage.cost, feature: priced.feature };
}

function studioFeatureOf(musicClipMaxSeconds: number, spec: StudioRequestSpec): StudioPriceKey {
  if (spec.kind === 'image_edit') {
    if (spec.full !== undefined || spec.durationSeconds !== undefined) {
      throw new InvalidStudioRequestError('durationSeconds and full apply to music only');
    }
    return 'image_edit';
  }
  if (
    spec.durationSeconds !== undefined &&
    (!Number.isSafeInteger(spec.durationSeconds) || spec.durationSeconds <= 0)
  ) {
    throw new InvalidStudioRequestError('durationSeconds must be a positive whole number');
  }
  if (spec.full === true) return 'music_full';
  if (spec.durationSeconds === undefined) {
    throw new InvalidStudioRequestError('a music clip needs durationSeconds (or full: true for a full song)');
  }
  if (spec.durationSeconds > musicClipMaxSeconds) {
    throw new InvalidStudioRequestError(
      `a music clip lasts at most ${musicClipMaxSeconds} s; ask for full: true for a full song`,
    );
  }
  return 'music_clip';
}

/** The UTC calendar day (YYYY-MM-DD) of an instant: the free allowance resets at UTC midnight. */
export function toUtcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}
