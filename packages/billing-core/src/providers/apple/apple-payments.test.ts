import { appleAmountMinorOf } from './apple-payments';

describe("an App Store price in the currency's minor units", () => {
  it('divides milliunits by the currency exponent', () => {
    expect(appleAmountMinorOf(990, 'USD')).toBe(99);
    expect(appleAmountMinorOf(120_000, 'JPY')).toBe(120);
    expect(appleAmountMinorOf(1_990, 'KWD')).toBe(1_990);
    expect(appleAmountMinorOf(null, 'USD')).toBe(0);
    expect(appleAmountMinorOf(990, null)).toBe(0);
  });
});
