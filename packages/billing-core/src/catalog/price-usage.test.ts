import { testCatalog } from '../testing/test-catalog';
import { priceUsage } from './price-usage';

const catalogWith = (features: unknown[], extra: Record<string, unknown> = {}) => testCatalog({ features, ...extra });

/** The product's example features (product.md "Features and prices"). */
const productFeatures = [
  { id: 'video', unit: 'second', price: 2 },
  {
    id: 'chat',
    unit: 'token',
    per: 1000,
    variants: { small: { input: 1, output: 2 }, large: { input: 8, output: 24 } },
  },
  { id: 'translate', price: 3, freeAllowance: { per: 'month', uses: 10 } },
];

describe('priceUsage: the catalog prices what the app spends', () => {
  const catalog = catalogWith(productFeatures);
  const price = (spec: Parameters<typeof priceUsage>[1]) => priceUsage(catalog.features, spec);

  it('prices per use, per unit and per 1,000 units of two meters, rounding up to a whole token', () => {
    expect(price({ feature: 'translate' })).toMatchObject({
      kind: 'priced',
      usage: { feature: 'translate', variant: null, quantities: { use: 1 }, prices: { use: 3 }, per: 1, cost: 3 },
    });
    expect(price({ feature: 'translate', quantity: 4 })).toMatchObject({ usage: { cost: 12 } });
    expect(price({ feature: 'video', quantity: 61 })).toMatchObject({
      usage: { quantities: { second: 61 }, prices: { second: 2 }, cost: 122 },
    });
    // (1,200 × 1 + 300 × 2) / 1,000 = 1.8 → 2; (1,000 × 8 + 1,000 × 24) / 1,000 = 32 exactly.
    expect(price({ feature: 'chat', variant: 'small', quantities: { input: 1200, output: 300 } })).toMatchObject({
      usage: { variant: 'small', prices: { input: 1, output: 2 }, per: 1000, cost: 2 },
    });
    expect(price({ feature: 'chat', variant: 'large', quantities: { input: 1000, output: 1000 } })).toMatchObject({
      usage: { cost: 32 },
    });
    expect(price({ feature: 'chat', variant: 'small', quantities: { input: 1 } })).toMatchObject({
      usage: { cost: 1 },
    });
    // Rounding in integers: one token past a whole multiple of a large quantity still rounds up.
    expect(price({ feature: 'chat', variant: 'small', quantities: { input: 9_007_199_254_000 + 1 } })).toMatchObject({
      usage: { cost: 9_007_199_255 },
    });
  });

  it('charges nothing for zero quantities', () => {
    expect(price({ feature: 'video', quantity: 0 })).toMatchObject({ usage: { cost: 0 } });
    expect(price({ feature: 'chat', variant: 'large', quantities: { input: 0, output: 0 } })).toMatchObject({
      usage: { cost: 0 },
    });
  });

  it('names what is known for an unknown feature, variant or meter', () => {
    expect(price({ feature: 'nope' })).toEqual({
      kind: 'unknown',
      message: 'no feature "nope"',
      known: ['chat', 'image_edit', 'music_clip', 'music_full', 'translate', 'video'],
    });
    expect(price({ feature: 'chat', variant: 'huge', quantities: { input: 1 } })).toEqual({
      kind: 'unknown',
      message: 'feature chat has no variant "huge"',
      known: ['large', 'small'],
    });
    expect(price({ feature: 'chat', quantities: { input: 1 } })).toMatchObject({
      kind: 'unknown',
      known: ['large', 'small'],
    });
    expect(price({ feature: 'chat', variant: 'small', quantities: { cached: 1 } })).toEqual({
      kind: 'unknown',
      message: 'feature chat has no meter "cached"',
      known: ['input', 'output'],
    });
    expect(price({ feature: 'video', variant: 'hd', quantity: 1 })).toMatchObject({ kind: 'unknown' });
    expect(price({ feature: 'chat', variant: 'small', quantity: 5 })).toMatchObject({
      kind: 'unknown',
      known: ['input', 'output'],
    });
  });

  it('refuses quantities that are not whole numbers of zero or more', () => {
    for (const quantity of [-1, 1.5, Number.NaN]) {
      expect(price({ feature: 'video', quantity })).toMatchObject({ kind: 'invalid' });
    }
    expect(price({ feature: 'video' })).toMatchObject({
      kind: 'invalid',
      message: 'give the quantity of seconds used',
    });
    expect(price({ feature: 'video', quantity: 1, quantities: { second: 1 } })).toMatchObject({ kind: 'invalid' });
  });

  it('reads the studio section as the features image_edit, music_clip and music_full, sharing the music allowance', () => {
    expect(catalog.features.get('music_clip')).toMatchObject({
      freeAllowance: { per: 'day', uses: 2, group: 'music' },
    });
    expect(catalog.features.get('music_full')).toMatchObject({
      freeAllowance: { per: 'day', uses: 2, group: 'music' },
    });
    expect(price({ feature: 'music_full' })).toMatchObject({ usage: { cost: 15 } });
    expect(price({ feature: 'image_edit' })).toMatchObject({ usage: { cost: 5 } });
    // A catalog that defines one of those ids itself wins over its studio section.
    const own = catalogWith([{ id: 'image_edit', price: 7 }]);
    expect(priceUsage(own.features, { feature: 'image_edit' })).toMatchObject({ usage: { cost: 7 } });
    expect(own.features.get('image_edit')?.freeAllowance).toBeNull();
  });
});

describe("the catalog's features, validated at start", () => {
  it('names a duplicate id, a variant without meters, a negative price, price and variants together, a group that disagrees', () => {
    const refused = (features: unknown[], message: RegExp) => expect(() => catalogWith(features)).toThrow(message);
    refused(
      [
        { id: 'a', price: 1 },
        { id: 'a', price: 2 },
      ],
      /feature "a" is listed twice/,
    );
    refused([{ id: 'a', variants: { small: {} } }], /a variant needs at least one meter/);
    refused([{ id: 'a', price: -1 }], /a price is never negative/);
    refused([{ id: 'a', variants: { small: { input: -2 } } }], /a price is never negative/);
    refused([{ id: 'a', price: 1, variants: { small: 1 } }], /needs exactly one of price or variants/);
    refused([{ id: 'a' }], /needs exactly one of price or variants/);
    refused([{ id: 'a', price: 1, per: 0 }], /per/);
    refused(
      [
        { id: 'a', price: 1, freeAllowance: { per: 'day', uses: 2, group: 'g' } },
        { id: 'b', price: 1, freeAllowance: { per: 'month', uses: 2, group: 'g' } },
      ],
      /free allowance group "g" is 2 per day in feature a/,
    );
    refused([{ id: 'bad id', price: 1 }], /A-Z a-z 0-9/);
  });

  it("names the prices: the catalog's version, else the first 12 hex of its SHA-256", () => {
    expect(catalogWith(productFeatures, { version: '2026-12-prices' }).version).toBe('2026-12-prices');
    const a = catalogWith(productFeatures).version;
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(catalogWith(productFeatures).version).toBe(a);
    expect(catalogWith([{ id: 'video', unit: 'second', price: 3 }]).version).not.toBe(a);
  });
});
