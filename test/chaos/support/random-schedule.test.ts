import { Prng, scenarioStreams } from './prng';
import { planRandomSchedule, type RandomScheduleOptions, scheduleFingerprint } from './random-schedule';

const short: RandomScheduleOptions = { profile: 'short', workers: 2, ingests: 2 };

/** The schedule `random-schedule` plans for `seed` (as chaos.chaos.ts derives its streams). */
function planFor(seed: number, options = short, simulatorDraws = 0) {
  const { rng, simulator } = scenarioStreams(new Prng(seed), 'random-schedule');
  // While a run goes on, the simulator draws once per delivery attempt, as many times as the
  // timing makes it retry; none of that may reach the scenario's stream.
  for (let n = 0; n < simulatorDraws; n += 1) simulator.next();
  return planRandomSchedule(rng.fork('plan'), options);
}

describe('random-schedule plan', () => {
  beforeEach(() => {
    // Event bodies carry the clock (Stripe's `created`, RevenueCat's dates): one instant for both builds.
    jest.useFakeTimers({ now: new Date('2026-11-30T12:00:00Z') });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('builds the same plan twice from one seed: events, bodies, studio requests, faults and pauses', () => {
    for (const seed of [1, 42, 449_654_657]) {
      const first = planFor(seed);
      const second = planFor(seed);
      expect(second).toEqual(first);
      expect(scheduleFingerprint(second)).toBe(scheduleFingerprint(first));
    }
  });

  it('builds the same plan however many draws the simulator made before and during the run', () => {
    const undisturbed = planFor(7);
    expect(planFor(7, short, 1)).toEqual(undisturbed);
    expect(planFor(7, short, 5_000)).toEqual(undisturbed);
  });

  it("keeps the scenario's stream apart from the simulator's", () => {
    const draw = (prng: Prng) => Array.from({ length: 20 }, () => prng.next());
    const alone = draw(scenarioStreams(new Prng(99), 'random-schedule').rng);
    const streams = scenarioStreams(new Prng(99), 'random-schedule');
    const interleaved: number[] = [];
    for (let n = 0; n < 20; n += 1) {
      streams.simulator.next();
      interleaved.push(streams.rng.next());
    }
    expect(interleaved).toEqual(alone);
  });

  it('plans a different schedule for another seed', () => {
    expect(scheduleFingerprint(planFor(1))).not.toBe(scheduleFingerprint(planFor(2)));
    expect(planFor(1).faults).not.toEqual(planFor(2).faults);
  });

  it('mixes purchases, refunds, subscription events, studio requests and faults of every kind', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const plan = planFor(seed);
      const ids = plan.events.map((event) => event.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.filter((id) => id.startsWith('random-rc-refund-') || id.startsWith('evt_random_ref_')).length).toBe(
        12,
      );
      expect(plan.stripeLifecycles).toHaveLength(3);
      for (const lifecycle of plan.stripeLifecycles) {
        for (const { event } of lifecycle.events) expect(ids).toContain(event.id);
      }
      expect(plan.studio).toHaveLength(10);
      expect(plan.faults).toHaveLength(4);
      for (const { pauseMs } of plan.faults) expect(pauseMs).toBeGreaterThanOrEqual(300);
    }
    const kinds = new Set(
      Array.from({ length: 40 }, (_, seed) => planFor(seed).faults.map(({ fault }) => fault.kind)).flat(),
    );
    expect([...kinds].sort()).toEqual(
      ['FLUSHALL', 'Postgres crash', 'Redis restart', 'duplicate burst', 'kill -9 ingest', 'kill -9 worker'].sort(),
    );
    const full = planFor(1, { profile: 'full', workers: 3, ingests: 2 });
    expect(full.faults).toHaveLength(25);
    expect(full.faults.some(({ fault }) => fault.kind === 'kill -9 worker' && fault.worker === 2)).toBe(true);
  });

  it('models each user as the sum of unrefunded packs and paid invoices', () => {
    const plan = planFor(11);
    const refundedPurchases = new Set(
      plan.events
        .filter((event) => event.id.startsWith('random-rc-refund-') || event.id.startsWith('evt_random_ref_'))
        .map((event) => event.id.replace('random-rc-refund-', 'random-rc-').replace('evt_random_ref_', 'evt_random_')),
    );
    const total = [...plan.expected.values()].reduce((sum, tokens) => sum + tokens, 0);
    const purchases = plan.events.filter(
      (event) =>
        /^random-rc-\d+$/.test(event.id) ||
        /^evt_random_\d+$/.test(event.id) ||
        event.id.startsWith('random-studio-fund-'),
    );
    const invoices = plan.stripeLifecycles.reduce((sum, lifecycle) => sum + lifecycle.invoices.length, 0);
    expect(total).toBe(100 * (purchases.length - refundedPurchases.size) + 100 * invoices);
  });
});
