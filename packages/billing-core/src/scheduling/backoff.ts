export interface BackoffSettings {
  /** Delay after the first failure. */
  baseDelayMs: number;
  /** No delay exceeds this. */
  maxDelayMs: number;
}

/**
 * Capped exponential backoff with "equal jitter": after the n-th failure the delay is drawn from
 * [d/2, d] where d = min(max, base · 2^(n-1)). Jitter spreads retries of events that failed
 * together (a provider outage) instead of sending them back in one wave.
 */
export function computeBackoffDelayMs(attemptsMade: number, settings: BackoffSettings, random = Math.random): number {
  const exponent = Math.max(0, attemptsMade - 1);
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.min(exponent, 40));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
