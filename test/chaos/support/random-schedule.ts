import { createHash } from 'node:crypto';
import { rcPurchase, rcRefund, stripePackPaid, stripePackRefunded } from './events';
import type { Prng } from './prng';
import type { SimulatedEvent } from './provider-simulator';
import { type PlannedStudioRequest, planStudioRequest } from './studio-model';
import { type StripeLifecycle, stripeLifecycle, tokensPerInvoice } from './subscription-events';

/** One fault of the random schedule, with everything it needs decided up front. */
export type PlannedFault =
  | { kind: 'kill -9 worker'; worker: number }
  | { kind: 'kill -9 ingest'; ingest: number }
  | { kind: 'FLUSHALL' }
  | { kind: 'Redis restart'; downMs: number }
  | { kind: 'Postgres crash'; downMs: number }
  | { kind: 'duplicate burst'; event: SimulatedEvent; copies: number };

/**
 * Everything `random-schedule` does, decided from its seed before anything runs: the webhooks in
 * delivery order (token packs of both providers, refunds of some of them, Stripe subscription
 * lifecycles), the studio requests with what the fake AI service will do with each, and the
 * faults with the pause before each. Nothing in it depends on timing.
 */
export interface RandomSchedule {
  events: SimulatedEvent[];
  /** Delivery pacing: the events spread over `durationMs`, at most `concurrency` in flight. */
  durationMs: number;
  concurrency: number;
  /** The balances the webhooks alone produce, per user (studio spending is added once run). */
  expected: Map<string, number>;
  stripeLifecycles: StripeLifecycle[];
  studio: PlannedStudioRequest[];
  faults: { pauseMs: number; fault: PlannedFault }[];
}

export interface RandomScheduleOptions {
  profile: 'short' | 'full';
  workers: number;
  ingests: number;
}

/**
 * Plans the random schedule from `rng` alone (independent forks for events, studio requests and
 * faults, so a change to one part leaves the others as they were). Pure: the same seed gives the
 * same plan (bodies included, at the same clock).
 */
export function planRandomSchedule(rng: Prng, options: RandomScheduleOptions): RandomSchedule {
  const full = options.profile === 'full';
  const events = rng.fork('events');
  const studioRng = rng.fork('studio');
  const faultRng = rng.fork('faults');
  const expected = new Map<string, number>();
  const credit = (user: string, tokens: number) => expected.set(user, (expected.get(user) ?? 0) + tokens);

  // Token packs over 8 users, half RevenueCat and half Stripe; a quarter of them refunded.
  const users = Array.from({ length: 8 }, (_, i) => `random-u${i}`);
  for (const user of users) expected.set(user, 0);
  const packs = full ? 400 : 48;
  const refunded = new Set(events.shuffle(Array.from({ length: packs }, (_, n) => n)).slice(0, Math.ceil(packs / 4)));
  const webhooks: SimulatedEvent[] = [];
  const packEvents: SimulatedEvent[] = [];
  for (let n = 0; n < packs; n += 1) {
    const user = events.pick(users);
    const isRefunded = refunded.has(n);
    if (events.chance(0.5)) {
      const transaction = `tx-random-${n}`;
      packEvents.push(rcPurchase(`random-rc-${n}`, user, transaction));
      if (isRefunded) packEvents.push(rcRefund(`random-rc-refund-${n}`, user, transaction));
    } else {
      packEvents.push(stripePackPaid(`evt_random_${n}`, `pi_random_${n}`, user));
      if (isRefunded) packEvents.push(stripePackRefunded(`evt_random_ref_${n}`, `ch_random_${n}`, `pi_random_${n}`));
    }
    if (!isRefunded) credit(user, 100);
  }
  webhooks.push(...packEvents);

  // Stripe subscription lifecycles (created, invoices, upgrades, cancellations, half deleted).
  const subscribers = Array.from({ length: full ? 8 : 3 }, (_, i) => `random-s${i}`);
  const deleted = new Set(events.shuffle(subscribers).slice(0, Math.ceil(subscribers.length / 2)));
  const stripeLifecycles = subscribers.map((user, i) =>
    stripeLifecycle(events, 'random', i, user, { annual: true, deleted: deleted.has(user) }),
  );
  for (const lifecycle of stripeLifecycles) {
    credit(lifecycle.userId, tokensPerInvoice * lifecycle.invoices.length);
    webhooks.push(...lifecycle.events.map(({ event }) => event));
  }

  // Everything in one shuffled order (a refund often before its payment, an update before its
  // creation); the studio users' funding goes first.
  const studioUsers = Array.from({ length: 2 }, (_, i) => `random-studio-u${i}`);
  const funding = studioUsers.map((user, i) => rcPurchase(`random-studio-fund-${i}`, user));
  for (const user of studioUsers) credit(user, 100);
  const ordered = [...funding, ...events.shuffle(webhooks)];

  const durationMs = full ? 45_000 : 8_000;
  const perStudioUser = full ? 20 : 5;
  const studio = studioUsers.flatMap((user) =>
    Array.from({ length: perStudioUser }, (_, n) =>
      planStudioRequest(
        studioRng,
        user,
        `${user}-n${n}`,
        Math.floor(((n + studioRng.next()) * durationMs) / perStudioUser),
      ),
    ),
  );

  const faults: RandomSchedule['faults'] = [];
  const kinds: PlannedFault['kind'][] = [
    'kill -9 worker',
    'kill -9 ingest',
    'FLUSHALL',
    'Redis restart',
    'Postgres crash',
    'duplicate burst',
  ];
  for (let n = 0; n < (full ? 25 : 4); n += 1) {
    const pauseMs = faultRng.int(300, 1_500);
    const kind = faultRng.pick(kinds);
    const fault: PlannedFault =
      kind === 'kill -9 worker'
        ? { kind, worker: faultRng.int(0, options.workers - 1) }
        : kind === 'kill -9 ingest'
          ? { kind, ingest: faultRng.int(0, options.ingests - 1) }
          : kind === 'Redis restart'
            ? { kind, downMs: faultRng.int(300, 1_500) }
            : kind === 'Postgres crash'
              ? { kind, downMs: faultRng.int(500, 2_000) }
              : kind === 'duplicate burst'
                ? { kind, event: faultRng.pick(packEvents), copies: 20 }
                : { kind };
    faults.push({ pauseMs, fault });
  }

  return { events: ordered, durationMs, concurrency: 12, expected, stripeLifecycles, studio, faults };
}

/**
 * A short digest of the plan (event ids in order, studio requests, faults; not the bodies, which
 * carry the clock): the report shows it, so two runs of one seed can be compared at a glance.
 */
export function scheduleFingerprint(schedule: RandomSchedule): string {
  const summary = {
    events: schedule.events.map((event) => `${event.provider}:${event.id}`),
    studio: schedule.studio,
    faults: schedule.faults.map(({ pauseMs, fault }) => ({
      pauseMs,
      ...fault,
      ...('event' in fault ? { event: fault.event.id } : {}),
    })),
    expected: [...schedule.expected],
  };
  return createHash('sha256').update(JSON.stringify(summary)).digest('hex').slice(0, 16);
}
