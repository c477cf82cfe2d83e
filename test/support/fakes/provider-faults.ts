import type { ServerResponse } from 'node:http';

/**
 * How a fake provider API misbehaves until the mode is changed again. Each request draws once:
 * hang (held until the client gives up, or `hangMs`), else 429 with Retry-After, else a 5xx,
 * else answered normally after the latency. Rates are probabilities in [0, 1].
 */
export interface ProviderFaultMode {
  /** Extra delay before a normal answer, drawn uniformly from [min, max] ms. */
  latencyMs?: [number, number];
  /** Share of requests answered 5xx (500, 502, 503 drawn uniformly). */
  errorRate?: number;
  /** Share of requests answered 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitRate?: number;
  retryAfterSeconds?: number;
  /** Share of requests held without an answer: the client's timeout fires first. */
  hangRate?: number;
  /** How long a hung request is held at most before the connection is dropped (default 10 s). */
  hangMs?: number;
}

/** What a fake served while faults were switched on. */
export interface ProviderFaultCounts {
  /** Requests that went through the fault gate. */
  requests: number;
  served429: number;
  served5xx: number;
  /** Requests held until the client gave up (a timeout on the client's side) or the hang ended. */
  hung: number;
  /** Normal answers given after an injected delay. */
  delayed: number;
}

export type FaultVerdict =
  /** Answer normally. */
  | { kind: 'pass' }
  /** Answer with this error status and headers (the fake writes its own error body). */
  | { kind: 'error'; status: number; headers: Record<string, string> }
  /** The request was hung and its connection is gone: write nothing. */
  | { kind: 'hung' };

/**
 * Fault injection shared by the provider fakes: `set(mode)` switches it on (a chaos scenario
 * toggles modes during a stream), `set(null)` switches it off; counts what was served. The
 * random source is injectable so a seeded scenario decides each request reproducibly.
 */
export class ProviderFaults {
  private mode: ProviderFaultMode | null = null;
  private random: () => number = Math.random;
  readonly counts: ProviderFaultCounts = { requests: 0, served429: 0, served5xx: 0, hung: 0, delayed: 0 };
  private readonly hanging = new Set<ServerResponse>();

  set(mode: ProviderFaultMode | null, random?: () => number): void {
    this.mode = mode;
    if (random) this.random = random;
  }

  get current(): ProviderFaultMode | null {
    return this.mode;
  }

  /** Decides one request; waits out latency or a hang before returning. */
  async gate(res: ServerResponse): Promise<FaultVerdict> {
    const mode = this.mode;
    if (!mode) return { kind: 'pass' };
    this.counts.requests += 1;
    const draw = this.random();
    const hangRate = mode.hangRate ?? 0;
    const rateLimitRate = mode.rateLimitRate ?? 0;
    const errorRate = mode.errorRate ?? 0;
    if (draw < hangRate) {
      this.counts.hung += 1;
      await this.hang(res, mode.hangMs ?? 10_000);
      return { kind: 'hung' };
    }
    if (draw < hangRate + rateLimitRate) {
      this.counts.served429 += 1;
      return { kind: 'error', status: 429, headers: { 'retry-after': String(mode.retryAfterSeconds ?? 1) } };
    }
    if (draw < hangRate + rateLimitRate + errorRate) {
      this.counts.served5xx += 1;
      const statuses = [500, 502, 503];
      return { kind: 'error', status: statuses[Math.floor(this.random() * statuses.length)] ?? 500, headers: {} };
    }
    if (mode.latencyMs) {
      const [min, max] = mode.latencyMs;
      this.counts.delayed += 1;
      await new Promise((resolve) => setTimeout(resolve, min + Math.floor(this.random() * (max - min + 1))));
    }
    return { kind: 'pass' };
  }

  /** Holds the request until the client closes it or `ms` pass, then drops the connection. */
  private async hang(res: ServerResponse, ms: number): Promise<void> {
    this.hanging.add(res);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      res.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.hanging.delete(res);
    if (!res.destroyed) res.destroy();
  }

  /** Drops every request still hanging (when the fake stops). */
  releaseAll(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }
}
