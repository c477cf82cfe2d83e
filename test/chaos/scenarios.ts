import { providerScenarios } from './provider-scenarios';
import type { ChaosCluster } from './support/chaos-cluster';
import { shutdownTimeoutMs } from './support/chaos-cluster';
import { purchaseStream, rcPurchase, rcRefund, stripePackPaid, stripePackRefunded } from './support/events';
import type { PlanModel } from './support/invariants';
import type { Prng } from './support/prng';
import type { ProviderSimulator, SimulatedEvent } from './support/provider-simulator';

export type Profile = 'short' | 'full';

export interface ScenarioContext {
  cluster: ChaosCluster;
  rng: Prng;
  sim: ProviderSimulator;
  profile: Profile;
  /** The model: final balance per user this scenario owns. */
  expected: Map<string, number>;
  /** Inbox events the model expects to park (provider:id). */
  expectedParked: Set<string>;
  /** The model of final plans and installments (subscription scenarios). */
  plans: PlanModel;
  faults: string[];
  notes: string[];
  /** Distinct events the scenario sent (the simulator counts deliveries). */
  events: SimulatedEvent[];
}

export interface Scenario {
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);
const usersOf = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-u${i}`);

function addModel(ctx: ScenarioContext, expected: Map<string, number>): void {
  for (const [user, balance] of expected) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + balance);
}

/**
 * Runs `fault` repeatedly (a PRNG-chosen pause between runs) while `work` is in flight; returns
 * when the work is done and the fault loop has finished its current fault.
 */
async function whileRunning(
  work: Promise<unknown>,
  fault: () => Promise<void>,
  pause: () => number,
  maxFaults = Number.POSITIVE_INFINITY,
): Promise<number> {
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  let faults = 0;
  const loop = (async () => {
    while (!done && faults < maxFaults) {
      await sleep(pause());
      if (done) break;
      await fault();
      faults += 1;
    }
  })();
  await finished;
  await loop;
  return faults;
}

/** A stream of purchases spread over the scenario's duration, the model updated. */
function stream(ctx: ScenarioContext, prefix: string, users: number, count: number, concurrency = 8) {
  const { events, expected } = purchaseStream(ctx.rng, prefix, usersOf(prefix, users), count);
  addModel(ctx, expected);
  ctx.events.push(...events);
  return ctx.sim.deliverAll(events, concurrency, size(ctx, 8_000, 45_000));
}

export const scenarios: Scenario[] = [
  {
    name: 'duplicate-storm',
    async run(ctx) {
      // Each event 50 times at once across both ingest instances; a Stripe pack also arrives
      // under a second event id for the same payment intent (checkout and intent events do).
      const users = usersOf('storm', 4);
      const events: SimulatedEvent[] = [];
      const pairs = size(ctx, 2, 8);
      for (let n = 0; n < pairs; n += 1) {
        const userId = ctx.rng.pick(users);
        events.push(rcPurchase(`storm-rc-${n}`, userId));
        events.push(stripePackPaid(`evt_storm_${n}_a`, `pi_storm_${n}`, userId));
        events.push(stripePackPaid(`evt_storm_${n}_b`, `pi_storm_${n}`, userId));
        ctx.expected.set(userId, (ctx.expected.get(userId) ?? 0) + 200);
      }
      for (const user of users) if (!ctx.expected.has(user)) ctx.expected.set(user, 0);
      ctx.events.push(...events);
      ctx.faults.push('50× each event concurrently');
      await Promise.all(events.map((event) => ctx.sim.storm(event, 50)));
    },
  },
  {
    name: 'kill-9-workers',
    async run(ctx) {
      const work = stream(ctx, 'kill', 6, size(ctx, 60, 400));
      const kills = await whileRunning(
        work,
        async () => ctx.rng.pick(ctx.cluster.workers).kill9(),
        () => ctx.rng.int(200, 1_200),
      );
      ctx.faults.push(`kill -9 of a worker ×${kills}`);
    },
  },
  {
    name: 'redis-flush-and-restart',
    async run(ctx) {
      const work = stream(ctx, 'redis', 6, size(ctx, 60, 300));
      const steps: (() => Promise<void>)[] = [
        async () => {
          await ctx.cluster.flushRedis();
          ctx.faults.push('FLUSHALL');
        },
        async () => {
          await ctx.cluster.restartRedis(ctx.rng.int(1_000, 2_500));
          ctx.faults.push('redis-server killed and restarted empty');
        },
      ];
      let step = 0;
      await whileRunning(
        work,
        async () => {
          const fault = steps[step++ % steps.length];
          if (fault) await fault();
        },
        () => ctx.rng.int(500, 1_500),
        size(ctx, 2, 6),
      );
    },
  },
  {
    name: 'postgres-crash',
    async run(ctx) {
      const work = stream(ctx, 'pgcrash', 6, size(ctx, 60, 300));
      const crashes = await whileRunning(
        work,
        async () => ctx.cluster.crashPostgres(ctx.rng.int(1_000, 3_000)),
        () => ctx.rng.int(800, 2_000),
        size(ctx, 1, 3),
      );
      ctx.faults.push(`Postgres stopped in immediate mode ×${crashes}`);
    },
  },
  {
    name: 'sigterm-under-load',
    async run(ctx) {
      const work = stream(ctx, 'sigterm', 6, size(ctx, 60, 300));
      const slow: string[] = [];
      let terminated = 0;
      await whileRunning(
        work,
        async () => {
          // One at a time, like a rolling deploy; ingest replicas keep the service up meanwhile.
          const victim = ctx.rng.pick([...ctx.cluster.ingests, ...ctx.cluster.workers]);
          await victim.ready();
          const { exit, ms } = await victim.terminate();
          terminated += 1;
          if (exit.code !== 0 || ms > shutdownTimeoutMs)
            slow.push(`${victim.name} exit ${JSON.stringify(exit)} in ${ms} ms`);
          ctx.notes.push(`${victim.name} stopped on SIGTERM in ${ms} ms (exit ${exit.code})`);
        },
        () => ctx.rng.int(300, 1_000),
        size(ctx, 4, 12),
      );
      ctx.faults.push(`SIGTERM ×${terminated}`);
      if (slow.length > 0) throw new Error(`processes did not stop cleanly within ${shutdownTimeoutMs} ms: ${slow}`);
    },
  },
  {
    name: 'revenuecat-out-of-order-refunds',
    async run(ctx) {
      // Per purchase, maybe a refund (CANCELLATION of the same transaction); all delivered in a
      // shuffled order, so a refund often arrives before its purchase and must wait for it.
      const users = usersOf('rcorder', 4);
      const events: SimulatedEvent[] = [];
      for (const user of users) ctx.expected.set(user, 0);
      for (let n = 0; n < size(ctx, 12, 60); n += 1) {
        const userId = ctx.rng.pick(users);
        const tx = `tx-rcorder-${n}`;
        events.push(rcPurchase(`rcorder-buy-${n}`, userId, tx));
        if (ctx.rng.chance(0.5)) events.push(rcRefund(`rcorder-refund-${n}`, userId, tx));
        else ctx.expected.set(userId, (ctx.expected.get(userId) ?? 0) + 100);
      }
      const shuffled = ctx.rng.shuffle(events);
      ctx.events.push(...shuffled);
      ctx.faults.push('shuffled purchase/refund order');
      await ctx.sim.deliverAll(shuffled, 4);
    },
  },
  {
    name: 'stripe-out-of-order-refunds',
    async run(ctx) {
      // Pack payments, some fully refunded, the charge.refunded often delivered before the
      // payment_intent.succeeded it refunds.
      const users = usersOf('sorder', 4);
      const events: SimulatedEvent[] = [];
      for (const user of users) ctx.expected.set(user, 0);
      for (let n = 0; n < size(ctx, 12, 60); n += 1) {
        const userId = ctx.rng.pick(users);
        events.push(stripePackPaid(`evt_sorder_pay_${n}`, `pi_sorder_${n}`, userId));
        if (ctx.rng.chance(0.5))
          events.push(stripePackRefunded(`evt_sorder_ref_${n}`, `ch_sorder_${n}`, `pi_sorder_${n}`));
        else ctx.expected.set(userId, (ctx.expected.get(userId) ?? 0) + 100);
      }
      const shuffled = ctx.rng.shuffle(events);
      ctx.events.push(...shuffled);
      ctx.faults.push('shuffled payment/refund order');
      await ctx.sim.deliverAll(shuffled, 4);
    },
  },
  {
    name: 'ai-dies-mid-saga',
    async run(ctx) {
      // Users buy tokens, then spend them on generations while the AI service hangs, fails,
      // drops every connection, and a worker is killed mid-call. Each paid request must end
      // completed, or failed and refunded exactly once.
      const users = usersOf('studio', 3);
      const funding = users.map((user, i) => rcPurchase(`studio-fund-${i}`, user));
      ctx.events.push(...funding);
      await ctx.sim.deliverAll(funding, 3);
      for (const user of users) {
        await waitForBalance(ctx, user, 100);
      }
      const behaviours = ['succeed', 'fail', 'hang', 'slow'] as const;
      const created: { user: string; id: string }[] = [];
      const requests = size(ctx, 8, 20);
      await Promise.all(
        users.map(async (user) => {
          for (let n = 0; n < requests; n += 1) {
            const fake = ctx.rng.pick(behaviours);
            const response = await ctx.cluster.apiRequest(`/v1/users/${user}/studio/requests`, {
              method: 'POST',
              body: { kind: 'image_edit', input: { fake, delayMs: ctx.rng.int(100, 3_000), prompt: `n${n}` } },
            });
            const body = (await response.json()) as { id?: string };
            if (response.status === 202 && body.id) created.push({ user, id: body.id });
            else if (response.status !== 402) throw new Error(`studio request answered ${response.status}`);
          }
        }),
      );
      await sleep(ctx.rng.int(300, 800));
      ctx.cluster.ai.dropConnections();
      ctx.rng.pick(ctx.cluster.workers).kill9();
      await sleep(ctx.rng.int(300, 800));
      ctx.cluster.ai.dropConnections();
      ctx.faults.push('AI hangs/fails/slow', 'AI connections dropped ×2', 'kill -9 of a worker mid-call');
      ctx.notes.push(`${created.length} studio requests accepted`);
      // The model: 100 tokens each; every completed charged request costs its price.
      await waitForStudio(ctx);
      const { rows } = await ctx.cluster.db
        .selectFrom('studio_requests')
        .select(['user_id', 'status', 'tokens_charged'])
        .where('user_id', 'in', users)
        .execute()
        .then((rows) => ({ rows }));
      for (const user of users) {
        const spent = rows
          .filter((row) => row.user_id === user && row.status === 'completed')
          .reduce((sum, row) => sum + row.tokens_charged, 0);
        ctx.expected.set(user, 100 - spent);
      }
      const statuses: Record<string, number> = {};
      for (const row of rows) statuses[row.status] = (statuses[row.status] ?? 0) + 1;
      ctx.notes.push(`studio outcomes ${JSON.stringify(statuses)}`);
    },
  },
  {
    name: 'random-schedule',
    async run(ctx) {
      // A seeded mix of everything: purchases, duplicates, refunds, and a fault at random moments.
      const work = stream(ctx, 'random', 8, size(ctx, 60, 500), 12);
      const faults: [string, () => Promise<void>][] = [
        ['kill -9 worker', async () => ctx.rng.pick(ctx.cluster.workers).kill9()],
        ['kill -9 ingest', async () => ctx.rng.pick(ctx.cluster.ingests).kill9()],
        ['FLUSHALL', () => ctx.cluster.flushRedis()],
        ['Redis restart', () => ctx.cluster.restartRedis(ctx.rng.int(300, 1_500))],
        ['Postgres crash', () => ctx.cluster.crashPostgres(ctx.rng.int(500, 2_000))],
        [
          'duplicate burst',
          async () => {
            const accepted = ctx.sim.accepted();
            if (accepted.length > 0) await ctx.sim.storm(ctx.rng.pick(accepted), 20);
          },
        ],
      ];
      await whileRunning(
        work,
        async () => {
          const [name, fault] = ctx.rng.pick(faults);
          ctx.faults.push(name);
          await fault();
        },
        () => ctx.rng.int(300, 1_500),
        size(ctx, 4, 25),
      );
    },
  },
];

async function waitForBalance(ctx: ScenarioContext, user: string, balance: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const wallet = await ctx.cluster.db
      .selectFrom('wallets')
      .select('balance')
      .where('user_id', '=', user)
      .executeTakeFirst()
      .catch(() => undefined);
    if (Number(wallet?.balance ?? -1) === balance) return;
    if (Date.now() > deadline) throw new Error(`${user} never reached balance ${balance}`);
    await sleep(200);
  }
}

async function waitForStudio(ctx: ScenarioContext): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const open = await ctx.cluster.db
      .selectFrom('studio_requests')
      .select('id')
      .where('status', 'in', ['received', 'processing'])
      .execute()
      .catch(() => [{ id: 0 }]);
    if (open.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${open.length} studio requests never settled`);
    await sleep(250);
  }
}

// Provider-side scenarios (subscription lifecycles, faulty provider APIs), kept in their own file.
scenarios.push(...providerScenarios);
