import { createHmac } from 'node:crypto';
import type { Provider } from '@tally/billing-core';
import type { ChaosCluster } from './chaos-cluster';
import { chaosRevenueCatAuth, chaosStripeSecret } from './chaos-cluster';
import type { Prng } from './prng';

export type { Provider };

export interface SimulatedEvent {
  provider: Provider;
  /** The provider's event id (inbox key). */
  id: string;
  body: string;
}

export interface DeliveryRecord {
  event: SimulatedEvent;
  /** Every answer (0 = no answer: connection refused, reset, timeout). */
  answers: number[];
  /** Set when some delivery of this event was answered 200. */
  accepted: boolean;
}

/** The hex of every signature this process built: the log check looks for each of them. */
export const signaturesSent = new Set<string>();

/** A Stripe-Signature header as Stripe builds it: t=<now>,v1=HMAC-SHA256(secret, "t.body"). */
export function stripeSignature(body: string, secret = chaosStripeSecret, timestamp = Math.floor(Date.now() / 1000)) {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  signaturesSent.add(v1);
  return `t=${timestamp},v1=${v1}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Plays Stripe and RevenueCat: POSTs a signed event to one of the ingest instances (chosen by
 * the PRNG, like a load balancer), and RETRIES it until it is answered 200, as both providers
 * do. Stripe events are signed afresh on every attempt. Records every answer. Its PRNG must be a
 * stream of its own (`scenarioStreams`): it draws once per attempt, and the number of attempts
 * depends on timing.
 */
export class ProviderSimulator {
  readonly records = new Map<string, DeliveryRecord>();
  deliveries = 0;
  /** Every POST: when it started (epoch ms), how long until its answer (or failure), the status. */
  readonly timings: { startedAt: number; ms: number; status: number }[] = [];

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly rng: Prng,
    private readonly retryDeadlineMs = 120_000,
  ) {}

  private recordOf(event: SimulatedEvent): DeliveryRecord {
    const key = `${event.provider}:${event.id}`;
    let record = this.records.get(key);
    if (!record) {
      record = { event, answers: [], accepted: false };
      this.records.set(key, record);
    }
    return record;
  }

  /** One POST; the status, or 0 when no answer came. */
  async postOnce(event: SimulatedEvent, ingest: { host: string; port: number }): Promise<number> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (event.provider === 'stripe') headers['stripe-signature'] = stripeSignature(event.body);
    else headers.authorization = chaosRevenueCatAuth;
    this.deliveries += 1;
    const startedAt = Date.now();
    let status = 0;
    try {
      const response = await fetch(`http://${ingest.host}:${ingest.port}/webhooks/${event.provider}`, {
        method: 'POST',
        headers,
        body: event.body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.text();
      status = response.status;
    } catch {
      status = 0;
    }
    this.timings.push({ startedAt, ms: Date.now() - startedAt, status });
    return status;
  }

  /** Delivers until a 200 (retrying with a short backoff), like the provider. */
  async deliver(event: SimulatedEvent): Promise<DeliveryRecord> {
    const record = this.recordOf(event);
    const deadline = Date.now() + this.retryDeadlineMs;
    for (let attempt = 0; ; attempt += 1) {
      const ingest = this.rng.pick(this.cluster.ingests);
      const status = await this.postOnce(event, ingest);
      record.answers.push(status);
      if (status === 200) {
        record.accepted = true;
        return record;
      }
      if (Date.now() > deadline) return record;
      await sleep(Math.min(1_000, 50 * 2 ** Math.min(attempt, 5)));
    }
  }

  /** The same event `copies` times at once, spread over the ingest instances. */
  async storm(event: SimulatedEvent, copies: number): Promise<void> {
    await Promise.all(Array.from({ length: copies }, () => this.deliver(event)));
  }

  /**
   * Runs `deliver` over `events` with at most `concurrency` in flight; with `durationMs`, new
   * events are paced to spread over that time (so faults land while traffic flows). `before` runs
   * just before an event's first delivery (a provider's state moves, then it notifies).
   */
  async deliverAll(
    events: SimulatedEvent[],
    concurrency: number,
    durationMs = 0,
    before?: (event: SimulatedEvent) => void,
  ): Promise<void> {
    let next = 0;
    const started = Date.now();
    const interval = events.length > 0 ? durationMs / events.length : 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const index = next++;
          const event = events[index];
          if (!event) return;
          const due = started + index * interval;
          if (due > Date.now()) await sleep(due - Date.now());
          before?.(event);
          await this.deliver(event);
        }
      }),
    );
  }

  accepted(): SimulatedEvent[] {
    return [...this.records.values()].filter((record) => record.accepted).map((record) => record.event);
  }

  answerCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const record of this.records.values()) {
      for (const answer of record.answers) counts[answer] = (counts[answer] ?? 0) + 1;
    }
    return counts;
  }
}
