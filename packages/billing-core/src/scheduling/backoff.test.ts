import { computeBackoffDelayMs } from './backoff';

describe('capped exponential backoff with jitter', () => {
  const settings = { baseDelayMs: 5_000, maxDelayMs: 30 * 60_000 };

  it('doubles the ceiling after each failure, drawing between half of it and all of it', () => {
    expect([1, 2, 3, 4].map((n) => computeBackoffDelayMs(n, settings, () => 1))).toEqual([
      5_000, 10_000, 20_000, 40_000,
    ]);
    expect([1, 2, 3, 4].map((n) => computeBackoffDelayMs(n, settings, () => 0))).toEqual([
      2_500, 5_000, 10_000, 20_000,
    ]);
  });

  it('never exceeds the cap, however many attempts were made', () => {
    for (const attempts of [10, 15, 100, 10_000]) {
      expect(computeBackoffDelayMs(attempts, settings, () => 1)).toBe(settings.maxDelayMs);
      expect(computeBackoffDelayMs(attempts, settings, () => 0)).toBe(settings.maxDelayMs / 2);
    }
  });
});
