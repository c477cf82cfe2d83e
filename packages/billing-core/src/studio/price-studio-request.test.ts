import { testCatalog, testCatalogInput } from '../testing/test-catalog';
import { InvalidStudioRequestError, priceStudioRequest, toUtcDay } from './price-studio-request';

// A clip priced apart from an image edit, so a price read from the wrong key shows.
const studio = testCatalog({
  studio: { ...testCatalogInput.studio, prices: { ...testCatalogInput.studio.prices, music_clip: 6 } },
});

describe('priceStudioRequest', () => {
  it('prices image edits, clips up to the limit and full songs from the catalog', () => {
    expect(priceStudioRequest(studio, { kind: 'image_edit' })).toMatchObject({
      priceKey: 'image_edit',
      priceTokens: 5,
      feature: { freeAllowance: { per: 'day', uses: 5, group: 'image_edit' } },
    });
    expect(priceStudioRequest(studio, { kind: 'music', durationSeconds: 30 })).toMatchObject({
      priceKey: 'music_clip',
      priceTokens: 6,
      feature: { freeAllowance: { per: 'day', uses: 2, group: 'music' } },
    });
    expect(priceStudioRequest(studio, { kind: 'music', full: true, durationSeconds: 240 })).toMatchObject({
      priceKey: 'music_full',
      priceTokens: 15,
      feature: { freeAllowance: { group: 'music' } },
    });
  });

  it('refuses what the catalog does not sell', () => {
    for (const spec of [
      { kind: 'music' as const, durationSeconds: 31 },
      { kind: 'music' as const },
      { kind: 'music' as const, durationSeconds: 0 },
      { kind: 'image_edit' as const, full: true },
      { kind: 'image_edit' as const, durationSeconds: 5 },
    ]) {
      expect(() => priceStudioRequest(studio, spec)).toThrow(InvalidStudioRequestError);
    }
  });

  it('the allowance day is the UTC day, whatever the local time zone', () => {
    expect(toUtcDay(new Date('2031-03-07T23:59:59.999Z'))).toBe('2031-03-07');
    expect(toUtcDay(new Date('2031-03-08T00:00:00.000Z'))).toBe('2031-03-08');
    expect(toUtcDay(new Date('2031-03-08T01:30:00+02:00'))).toBe('2031-03-07');
  });
});
