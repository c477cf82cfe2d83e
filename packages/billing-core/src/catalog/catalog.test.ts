import { testCatalogInput } from '../testing/test-catalog';
import { CatalogError, exampleCatalogPath, loadCatalog, toCatalog } from './catalog';

const validCatalog = () => ({
  plans: [
    {
      id: 'premium',
      revenuecatProducts: ['premium.monthly', 'premium_play:monthly'],
      stripePrices: [
        { priceId: 'price_m', interval: 'month', creditsPerPeriod: 100 },
        { priceId: 'price_y', interval: 'year', creditsPerPeriod: 1200 },
      ],
    },
  ],
  tokenPacks: [
    {
      id: 'tokens_100',
      tokens: 100,
      revenuecatProducts: ['tokens.100'],
      stripePriceId: 'price_t',
      amountMinor: 499,
      currency: 'usd',
    },
  ],
  studio: testCatalogInput.studio,
});

describe('catalog', () => {
  it('loads the example catalog that ships as the default', () => {
    const catalog = loadCatalog(exampleCatalogPath);
    expect(catalog.findTokenPackByRevenueCatProduct('tokens.100')).toMatchObject({ id: 'tokens_100', tokens: 100 });
    expect(catalog.findTokenPackByRevenueCatProduct('2100_tokens')).toMatchObject({ tokens: 2100 });
    expect(catalog.findPlanByRevenueCatProduct('premium.annual')?.id).toBe('premium');
  });

  it('finds a Play Store product by its subscription id when the catalog lists only that', () => {
    const catalog = toCatalog(validCatalog());
    expect(catalog.findPlanByRevenueCatProduct('premium_play:monthly')?.id).toBe('premium');
    expect(catalog.findPlanByRevenueCatProduct('premium.monthly:base')?.id).toBe('premium');
    expect(catalog.findPlanByRevenueCatProduct('unknown')).toBeUndefined();
  });

  it('finds packs and plans by their App Store and Google Play products, and refuses one product in two places', () => {
    const input = validCatalog();
    const catalog = toCatalog({
      ...input,
      plans: [{ ...input.plans[0], appStoreProducts: ['com.app.premium'], googlePlayProducts: ['premium_sub'] }],
      tokenPacks: [
        { ...input.tokenPacks[0], appStoreProducts: ['com.app.tokens100'], googlePlayProducts: ['tokens_100'] },
      ],
    });
    expect(catalog.findTokenPackByStoreProduct('appStore', 'com.app.tokens100')?.id).toBe('tokens_100');
    expect(catalog.findTokenPackByStoreProduct('googlePlay', 'tokens_100')?.id).toBe('tokens_100');
    expect(catalog.findTokenPackByStoreProduct('appStore', 'tokens_100')).toBeUndefined();
    expect(catalog.findPlanByStoreProduct('appStore', 'com.app.premium')?.id).toBe('premium');
    expect(catalog.findPlanByStoreProduct('googlePlay', 'premium_sub:monthly-base')?.id).toBe('premium');
    expect(catalog.findPlanByStoreProduct('googlePlay', 'com.app.premium')).toBeUndefined();
    expect(() =>
      toCatalog({
        ...input,
        plans: [{ ...input.plans[0], appStoreProducts: ['com.app.same'] }],
        tokenPacks: [{ ...input.tokenPacks[0], appStoreProducts: ['com.app.same'] }],
      }),
    ).toThrow('App Store product "com.app.same" is used by both plan premium and pack tokens_100');
  });

  it('lists every problem of an invalid catalog', () => {
    const bad = validCatalog();
    bad.plans[0]?.stripePrices.push({ priceId: 'price_y2', interval: 'year', creditsPerPeriod: 1000 });
    bad.tokenPacks.push({
      id: 'tokens_100',
      tokens: -5,
      revenuecatProducts: ['premium.monthly'],
      stripePriceId: 'price_m',
      amountMinor: 1,
      currency: 'USD',
    });
    let message = '';
    try {
      toCatalog(bad, 'test catalog');
    } catch (error) {
      expect(error).toBeInstanceOf(CatalogError);
      message = (error as Error).message;
    }
    expect(message).toContain('test catalog is not a valid catalog');
    expect(message).toContain('multiple of 12');
    expect(message).toContain('tokenPacks[1].tokens');
    expect(message).toContain('lowercase ISO 4217');
  });

  it('rejects the same product, price or id used twice', () => {
    const bad = validCatalog();
    bad.tokenPacks.push({
      id: 'tokens_200',
      tokens: 200,
      revenuecatProducts: ['premium.monthly'],
      stripePriceId: 'price_m',
      amountMinor: 999,
      currency: 'usd',
    });
    expect(() => toCatalog(bad)).toThrow(
      /RevenueCat product "premium.monthly" is used by both plan premium and pack tokens_200/,
    );
    expect(() => toCatalog(bad)).toThrow(/Stripe price "price_m" is used by both/);
  });

  it('fails closed on a pack sold through Stripe without the price Stripe must receive', () => {
    const catalog = validCatalog();
    const { amountMinor: _amount, currency: _currency, ...unpriced } = catalog.tokenPacks[0] ?? { id: 'x', tokens: 1 };
    expect(() => toCatalog({ ...catalog, tokenPacks: [unpriced] })).toThrow(
      'a pack with a stripePriceId needs amountMinor and currency (what Stripe must receive)',
    );
  });

  it('names a missing or malformed file', () => {
    expect(() => loadCatalog('/nonexistent/catalog.json')).toThrow(/cannot read catalog \/nonexistent\/catalog.json/);
    expect(() => loadCatalog(__filename)).toThrow(/is not JSON/);
  });
});
