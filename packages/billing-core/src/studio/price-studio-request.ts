import type { CatalogData } from '../catalog/catalog-schema';
import type { StudioKind } from '../db/schema';
import { BillingError } from '../errors';

export interface StudioRequestSpec {
  kind: StudioKind;
  /** Music only: the clip length; required for a clip, optional for a full song. */
  durationSeconds?: number | undefined;
  /** Music only: a full song instead of a clip. */
  full?: boolean | undefined;
}

export type StudioPriceKey = keyof CatalogData['studio']['prices'];

export interface StudioPrice {
  priceKey: StudioPriceKey;
  priceTokens: number;
  /** The free daily allowance this request draws on (`freeDailyAllowance[kind]`). */
  allowanceKind: StudioKind;
  allowancePerDay: number;
}

/** The request asks for something the catalog does not sell (a clip over the limit, a full image edit). */
export class InvalidStudioRequestError extends BillingError {
  constructor(message: string) {
    super('invalid_request', message, { retryable: false });
  }
}

/**
 * What a generation costs, from the catalog: an image edit; a music clip up to
 * musicClipMaxSeconds; a full song (`full: true`). Clips and full songs share the `music` free
 * allowance. Pure. Throws InvalidStudioRequestError for a request the catalog does not price.
 */
export function priceStudioRequest(studio: CatalogData['studio'], spec: StudioRequestSpec): StudioPrice {
  if (spec.kind === 'image_edit') {
    if (spec.full !== undefined || spec.durationSeconds !== undefined) {
      throw new InvalidStudioRequestError('durationSeconds and full apply to music only');
    }
    return {
      priceKey: 'image_edit',
      priceTokens: studio.prices.image_edit,
      allowanceKind: 'image_edit',
      allowancePerDay: studio.freeDailyAllowance.image_edit,
    };
  }
  if (
    spec.durationSeconds !== undefined &&
    (!Number.isSafeInteger(spec.durationSeconds) || spec.durationSeconds <= 0)
  ) {
    throw new InvalidStudioRequestError('durationSeconds must be a positive whole number');
  }
  const music = { allowanceKind: 'music' as const, allowancePerDay: studio.freeDailyAllowance.music };
  if (spec.full === true) return { ...music, priceKey: 'music_full', priceTokens: studio.prices.music_full };
  if (spec.durationSeconds === undefined) {
    throw new InvalidStudioRequestError('a music clip needs durationSeconds (or full: true for a full song)');
  }
  if (spec.durationSeconds > studio.musicClipMaxSeconds) {
    throw new InvalidStudioRequestError(
      `a music clip lasts at most ${studio.musicClipMaxSeconds} s; ask for full: true for a full song`,
    );
  }
  return { ...music, priceKey: 'music_clip', priceTokens: studio.prices.music_clip };
}

/** The UTC calendar day (YYYY-MM-DD) of an instant: the free allowance resets at UTC midnight. */
export function toUtcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}
