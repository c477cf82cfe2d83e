import { providerScenarios } from './provider-scenarios';
import type { Scenario, ScenarioContext } from './scenario';
import { shutdownTimeoutMs } from './support/chaos-cluster';
import {
  purchaseStream,
  rcPurchase,
  rcRefund,
  stripePackCheckoutCompleted,
  stripePackPaid,
  stripePackRefunded,
} from './support/events';
import { settle } from './support/invariants';
import type { SimulatedEvent } from './support/provider-simulator';
import { type PlannedFault, planRandomSchedule, scheduleFingerprint } from './support/random-schedule';
import { rerunEvidence } from './support/rerun-evidence';
import { planStudioRequest, StudioModel } from './support/studio-model';
import { StripeTimeline } from './support/subscription-events';

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
export async function whileRunning(
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
export function stream(ctx: ScenarioContext, prefix: string, users: number, count: number, concurrency = 8) {
  const { events, expected } = purchaseStream(ctx.rng, prefix, usersOf(prefix, users), count);
  addModel(ctx, expected);
  ctx.events.push(...events);
  return ctx.sim.deliverAll(events, concurrency, size(ctx, 8_000, 45_000));
}

export const scenarios: Scenario[] = [
  {
    name: 'duplicate-storm',
    async run(ctx) {
      // Each event 50 times at once across both ingest instances. A Stripe pack payment arrives
      // three ways at once: its payment_intent.succeeded, the same under a second event id, and
      // the checkout.session.completed of the same payment intent: one credit, one payment row,
      // one confirmation email.
      const users = usersOf('storm', 4);
      const events: SimulatedEvent[] = [];
      const pairs = size(ctx, 2, 8);
      for (let n = 0; n < pairs; n += 1) {
        const userId = ctx.rng.pick(users);
        events.push(rcPurchase(`storm-rc-${n}`, userId));
        events.push(stripePackPaid(`evt_storm_${n}_a`, `pi_storm_${n}`, userId));
        events.push(stripePackPaid(`evt_storm_${n}_b`, `pi_storm_${n}`, userId));
        events.push(stripePackCheckoutCompleted(`evt_storm_${n}_cs`, `cs_storm_${n}`, `pi_storm_${n}`, userId));
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
      const sinceMs = Date.now();
      const outputBefore = new Map(ctx.cluster.workers.map((worker) => [worker, worker.output.length]));
      const work = stream(ctx, 'kill', 6, size(ctx, 60, 400));
      const kills = await whileRunning(
        work,
        async () => ctx.rng.pick(ctx.cluster.workers).kill9(),
        () => ctx.rng.int(200, 1_200),
      );
      ctx.faults.push(`kill -9 of a worker ×${kills}`);
      // Where the kills landed, from the re-runs of the jobs the dead workers held (once they ran).
      const settleStarted = Date.now();
      const pendingAfter10s = await settle(ctx.cluster.db, 10_000);
      if (pendingAfter10s.length > 0) {
        const pending = await settle(ctx.cluster.db, 50_000);
        ctx.notes.push(
          `still in flight 10 s after the stream: ${pendingAfter10s.join(', ')}; settled after ${
            Date.now() - settleStarted
          } ms${pending.length > 0 ? ` (not yet: ${pending.join(', ')})` : ''}`,
        );
      }
      const evidence = await rerunEvidence(ctx.cluster, ctx.cluster.db, {
        sinceMs,
        outputBefore,
        eventIds: ctx.events.map((event) => event.id),
      });
      ctx.notes.push(
        `${kills} kills left ${evidence.stalledJobs} inbox jobs stalled (held by a dead worker, re-run by another): ` +
          `${evidence.killedAfterCommit} killed between commit and acknowledgement (the re-run found the row finished), ` +
          `${evidence.killedBeforeCommit} before the commit (the re-run applied the event), ${evidence.unexplained} without a re-run line; ` +
          `${evidence.rowsWithAttemptsOver1} rows claimed more than once (max attempts ${evidence.maxAttempts})`,
      );
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
      // Rolling SIGTERMs of ingest, workers and the api while webhooks stream in and users send
      // studio requests (free-tier image edits: five per user, answered at once, slowly, with a 500
      // or never). Every process must exit 0 within its grace period; every 202 must have its row,
      // and every generation must end as the fake's record says (a graceful stop finishes or
      // hands back what it started; nothing is cut here but by the processes themselves).
      const work = stream(ctx, 'sigterm', 6, size(ctx, 60, 300));
      const plan = ctx.rng.fork('studio');
      const studioUsers = usersOf('sigterm-studio', size(ctx, 4, 12));
      const durationMs = size(ctx, 8_000, 45_000);
      const studioPlan = studioUsers.flatMap((user) =>
        Array.from({ length: 5 }, (_, n) =>
          planStudioRequest(plan, user, `${user}-n${n}`, Math.floor(((n + plan.next()) * durationMs) / 5), [
            'succeed',
            'slow',
            'fail',
            'hang',
          ]),
        ),
      );
      const studio = new StudioModel(ctx.cluster);
      const studioWork = studio.sendAll(studioPlan);
      const slow: string[] = [];
      let terminated = 0;
      const victims = [...ctx.cluster.ingests, ...ctx.cluster.workers, ctx.cluster.api];
      await whileRunning(
        Promise.all([work, studioWork]),
        async () => {
          // One at a time, like a rolling deploy; ingest replicas keep the service up meanwhile.
          const victim = ctx.rng.pick(victims);
          await victim.ready();
          const { exit, ms } = await victim.terminate();
          terminated += 1;
          if (exit.code !== 0 || ms > shutdownTimeoutMs)
            slow.push(`${victim.name} exit ${JSON.stringify(exit)} in ${ms} ms`);
          ctx.notes.push(`${victim.name} stopped on SIGTERM in ${ms} ms (exit ${exit.code})`);
        },
        () => ctx.rng.int(300, 1_000),
        size(ctx, 5, 15),
      );
      ctx.faults.push(`SIGTERM ×${terminated}`, 'studio requests in flight');
      await studio.waitForSettled();
      const { spent, violations, notes } = await studio.check();
      for (const user of studioUsers) ctx.expected.set(user, -(spent.get(user) ?? 0));
      ctx.violations.push(...violations);
      ctx.notes.push(...notes);
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
      // Users buy tokens, then spend them on generations while the AI service answers, fails, hangs,
      // answers slowly or too late, drops every connection, is down for 1–2 s (closed and listening
      // again on the same port), and a worker is killed mid-call. Everything is planned up front.
      // The model comes from what was sent and what the fake did (studio-model.ts): each paid
      // request ends completed exactly when the fake delivered a 200, else failed and refunded once.
      const plan = ctx.rng.fork('plan');
      const users = usersOf('studio', 3);
      const perUser = size(ctx, 8, 20);
      const faults = [
        { name: 'AI connections dropped', atMs: plan.int(300, 800), run: async () => ctx.cluster.ai.dropConnections() },
      ];
      const victim = plan.int(0, ctx.cluster.workers.length - 1);
      faults.push({
        name: 'kill -9 of a worker mid-call',
        atMs: (faults.at(-1)?.atMs ?? 0) + plan.int(300, 800),
        run: async () => ctx.cluster.workers[victim]?.kill9(),
      });
      const downMs = plan.int(1_000, 2_000);
      faults.push({
        name: `AI service down ${downMs} ms (closed, then listening again on its port)`,
        atMs: (faults.at(-1)?.atMs ?? 0) + plan.int(500, 1_000),
        run: () => ctx.cluster.ai.outage(downMs),
      });
      faults.push({
        name: 'AI connections dropped',
        atMs: (faults.at(-1)?.atMs ?? 0) + downMs + plan.int(300, 800),
        run: async () => ctx.cluster.ai.dropConnections(),
      });
      const spreadMs = (faults.at(-1)?.atMs ?? 0) + 500;
      const requests = users.flatMap((user) =>
        Array.from({ length: perUser }, (_, n) =>
          planStudioRequest(plan, user, `${user}-n${n}`, Math.floor(((n + plan.next()) * spreadMs) / perUser)),
        ),
      );

      const funding = users.map((user, i) => rcPurchase(`studio-fund-${i}`, user));
      ctx.events.push(...funding);
      await ctx.sim.deliverAll(funding, 3);
      for (const user of users) {
        await waitForBalance(ctx, user, 100);
      }
      const model = new StudioModel(ctx.cluster);
      const started = Date.now();
      const faulting = (async () => {
        for (const fault of faults) {
          const due = started + fault.atMs;
          if (due > Date.now()) await sleep(due - Date.now());
          await model.aroundFault(fault.run);
          ctx.faults.push(fault.name);
        }
      })();
      await Promise.all([model.sendAll(requests, started), faulting]);
      ctx.faults.push('AI answers, fails, hangs, slow and late');
      await model.waitForSettled();
      const { spent, violations, notes } = await model.check();
      for (const user of users) ctx.expected.set(user, 100 - (spent.get(user) ?? 0));
      ctx.violations.push(...violations);
      ctx.notes.push(...notes);
    },
  },
  {
    name: 'random-schedule',
    async run(ctx) {
      // A seeded mix of everything, planned up front from the seed (random-schedule.ts): token
      // packs of both providers, refunds of a quarter of them, Stripe subscription lifecycles,
      // studio requests with what the AI service does with each, and faults at planned pauses.
      // Faults run between AI answers (StudioModel.aroundFault), so they also cut the AI calls in
      // flight. Only the simulator's retries (its own PRNG stream) follow the timing.
      const schedule = planRandomSchedule(ctx.rng.fork('plan'), {
        profile: ctx.profile,
        workers: ctx.cluster.workers.length,
        ingests: ctx.cluster.ingests.length,
      });
      addModel(ctx, schedule.expected);
      for (const lifecycle of schedule.stripeLifecycles) {
        ctx.plans.stripeSubscriptions.set(lifecycle.subscriptionId, lifecycle.expected);
      }
      ctx.events.push(...schedule.events);
      const timeline = new StripeTimeline(ctx.cluster.stripe, schedule.stripeLifecycles);
      const studio = new StudioModel(ctx.cluster);
      const started = Date.now();
      const webhooks = ctx.sim.deliverAll(schedule.events, schedule.concurrency, schedule.durationMs, (event) =>
        timeline.advance(event),
      );
      const faults = (async () => {
        for (const { pauseMs, fault } of schedule.faults) {
          await sleep(pauseMs);
          ctx.faults.push(fault.kind);
          await studio.aroundFault(() => runPlannedFault(ctx, fault));
        }
      })();
      await Promise.all([webhooks, studio.sendAll(schedule.studio, started), faults]);
      await studio.waitForSettled();
      const { spent, violations, notes } = await studio.check();
      for (const [user, tokens] of spent) ctx.expected.set(user, (ctx.expected.get(user) ?? 0) - tokens);
      ctx.violations.push(...violations);
      const refunds = schedule.events.filter((event) => /refund|_ref_/.test(event.id)).length;
      ctx.notes.push(
        `plan ${scheduleFingerprint(schedule)} (the same for every run of this seed and profile): ${
          schedule.events.length
        } webhooks (${refunds} refunds, ${schedule.stripeLifecycles.reduce(
          (sum, lifecycle) => sum + lifecycle.events.length,
          0,
        )} subscription events), ${schedule.studio.length} studio requests, faults ${schedule.faults
          .map(({ pauseMs, fault }) => `+${pauseMs} ms ${fault.kind}`)
          .join(', ')}`,
        ...notes,
      );
    },
  },
];

async function runPlannedFault(ctx: ScenarioContext, fault: PlannedFault): Promise<void> {
  switch (fault.kind) {
    case 'kill -9 worker':
      return ctx.cluster.workers[fault.worker]?.kill9();
    case 'kill -9 ingest':
      return ctx.cluster.ingests[fault.ingest]?.kill9();
    case 'FLUSHALL':
      return ctx.cluster.flushRedis();
    case 'Redis restart':
      return ctx.cluster.restartRedis(fault.downMs);
    case 'Postgres crash':
      return ctx.cluster.crashPostgres(fault.downMs);
    case 'duplicate burst':
      return ctx.sim.storm(fault.event, fault.copies);
  }
}

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

// Provider-side scenarios (subscription lifecycles, faulty provider APIs), kept in their own file.
scenarios.push(...providerScenarios);
