// Scenarios about the provider side: Stripe subscription lifecycles out of order with annual
// installments coming due under worker kills, and provider APIs that are slow, failing, hanging
// or rate limiting while events that must read them stream in. Appended to `scenarios`.
import { sql } from 'kysely';
import type { ProviderFaultMode } from '../support/fakes/provider-faults';
import type { Scenario, ScenarioContext } from './scenario';
import { rcPurchase } from './support/events';
import { settle } from './support/invariants';
import type { Prng } from './support/prng';
import type { SimulatedEvent } from './support/provider-simulator';
import {
  type RevenueCatLifecycle,
  RevenueCatTimeline,
  revenueCatLifecycle,
  type StripeLifecycle,
  StripeTimeline,
  stripeLifecycle,
  tokensPerInstallment,
  tokensPerInvoice,
} from './support/subscription-events';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const size = (ctx: ScenarioContext, short: number, full: number) => (ctx.profile === 'full' ? full : short);

/** Runs `fault` after PRNG pauses until `work` settles; returns how many times it ran. */
async function repeatWhile(work: Promise<unknown>, fault: () => Promise<void> | void, pause: () => number) {
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  let count = 0;
  const loop = (async () => {
    while (!done) {
      await sleep(pause());
      if (done) break;
      await fault();
      count += 1;
    }
  })();
  await finished;
  await loop;
  return count;
}

/**
 * Test-only "time passes" for one subscription: its installments up to `throughSequence` that are
 * not due yet become due (due_at in the past), as months passing would make them. The UPDATE
 * returns each row's status at that instant (a concurrent void either committed before, and the
 * row comes back `void`, or waits and then finds it due and leaves it), which is the model's record.
 */
async function letMonthsPass(ctx: ScenarioContext, subscriptionId: string, throughSequence: number): Promise<number> {
  const { rows } = await sql<{ id: string; status: string }>`
    UPDATE stripe_installments SET due_at = now() - interval '1 second'
     WHERE subscription_id = ${subscriptionId} AND sequence <= ${throughSequence} AND due_at > now()
     RETURNING id::text, status`.execute(ctx.cluster.db);
  for (const row of rows) ctx.plans.installmentsMadeDue.set(row.id, row.status);
  return rows.length;
}

/** One lifecycle per user; exactly half of them (chosen by the PRNG) end deleted. */
function stripeLifecycles(rng: Prng, prefix: string, users: string[]): StripeLifecycle[] {
  const deleted = new Set(rng.shuffle(users).slice(0, Math.ceil(users.length / 2)));
  return users.map((user, i) => stripeLifecycle(rng, prefix, i, user, { annual: true, deleted: deleted.has(user) }));
}

/** The model's part for Stripe lifecycles: plan = Stripe's final state; tokens per invoice and granted installment. */
function modelStripe(ctx: ScenarioContext, lifecycles: StripeLifecycle[]): void {
  for (const lifecycle of lifecycles) {
    ctx.plans.stripeSubscriptions.set(lifecycle.subscriptionId, lifecycle.expected);
    ctx.expected.set(
      lifecycle.userId,
      (ctx.expected.get(lifecycle.userId) ?? 0) + tokensPerInvoice * lifecycle.invoices.length,
    );
  }
}

async function installmentStatuses(ctx: ScenarioContext, subscriptionIds: string[]) {
  const rows = await ctx.cluster.db
    .selectFrom('stripe_installments')
    .select(['subscription_id', 'status'])
    .where('subscription_id', 'in', subscriptionIds)
    .execute();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + 1;
  return counts;
}

const lifecycleScenario: Scenario = {
  name: 'stripe-subscription-lifecycles',
  async run(ctx) {
    // Per user one Stripe subscription (monthly or annual, maybe upgraded, cancelled at the period
    // end, deleted); every event of every user shuffled together; the fake Stripe holds the true
    // state the handlers re-read. Installments come due while workers are kill -9ed.
    const users = Array.from({ length: size(ctx, 8, 30) }, (_, i) => `life-u${i}`);
    const lifecycles = stripeLifecycles(ctx.rng, 'life', users);
    const timeline = new StripeTimeline(ctx.cluster.stripe, lifecycles);
    const events = ctx.rng.shuffle(lifecycles.flatMap((lifecycle) => lifecycle.events.map(({ event }) => event)));
    ctx.events.push(...events);
    modelStripe(ctx, lifecycles);
    const annual = lifecycles.filter((lifecycle) => lifecycle.expected.annualInvoices.length > 0);
    const monthsPassed = new Map<string, number>();
    const passMonths = async (lifecycle: StripeLifecycle, months: number) => {
      const through = Math.min(11, (monthsPassed.get(lifecycle.subscriptionId) ?? 0) + months);
      monthsPassed.set(lifecycle.subscriptionId, through);
      return letMonthsPass(ctx, lifecycle.subscriptionId, through);
    };

    let deliveriesDone = false;
    const deliveries = ctx.sim
      .deliverAll(events, 6, size(ctx, 7_000, 40_000), (event) => timeline.advance(event))
      .finally(() => {
        deliveriesDone = true;
      });
    let madeDue = 0;
    const work = (async () => {
      // Months pass for a random annual subscription now and then while the events stream in
      // (its installments may not exist yet, or may just have been voided by a deletion).
      const passing = (async () => {
        while (!deliveriesDone && annual.length > 0) {
          await sleep(ctx.rng.int(300, 1_000));
          madeDue += await passMonths(ctx.rng.pick(annual), ctx.rng.int(1, 2));
        }
      })();
      await Promise.all([deliveries, passing]);
      // Everything delivered: once the inbox has drained, more months pass for every annual
      // subscription, so installments of live and of deleted subscriptions come due.
      // (At most 20 s: under the kills it may take a while; the months pass regardless.)
      await settle(ctx.cluster.db, 20_000, 'effects');
      for (const lifecycle of annual) madeDue += await passMonths(lifecycle, ctx.rng.int(1, 3));
      await sleep(2_000);
    })();
    const kills = await repeatWhile(
      work,
      () => ctx.rng.pick(ctx.cluster.workers).kill9(),
      () => ctx.rng.int(300, 1_500),
    );
    ctx.faults.push(`shuffled subscription lifecycles`, `installments made due`, `kill -9 of a worker ×${kills}`);

    // Each installment made due while still scheduled is owed once.
    const granted = new Set(ctx.plans.grantedInstallments());
    const { rows } = await sql<{ id: string; user_id: string }>`
      SELECT id::text, user_id FROM stripe_installments
       WHERE subscription_id = ANY(${lifecycles.map((lifecycle) => lifecycle.subscriptionId)})`.execute(ctx.cluster.db);
    for (const row of rows) {
      if (granted.has(row.id))
        ctx.expected.set(row.user_id, (ctx.expected.get(row.user_id) ?? 0) + tokensPerInstallment);
    }
    const deleted = lifecycles.filter((lifecycle) => lifecycle.expected.status === 'canceled').length;
    const madeDueWhileVoid = [...ctx.plans.installmentsMadeDue.values()].filter((status) => status === 'void').length;
    ctx.notes.push(
      `${lifecycles.length} subscriptions (${annual.length} with an annual invoice, ${deleted} deleted), ${lifecycles.reduce(
        (sum, lifecycle) => sum + lifecycle.invoices.length,
        0,
      )} paid invoices`,
      `${madeDue} installments made due: ${granted.size} while scheduled (owed), ${madeDueWhileVoid} after a void; statuses before settle ${JSON.stringify(
        await installmentStatuses(
          ctx,
          lifecycles.map((lifecycle) => lifecycle.subscriptionId),
        ),
      )}`,
    );
  },
};

/** The fault modes a fake provider API cycles through while the stream runs. */
const faultModes: [string, ProviderFaultMode | null][] = [
  ['healthy', null],
  ['slow', { latencyMs: [200, 1_500] }],
  ['5xx', { errorRate: 0.5, latencyMs: [0, 200] }],
  ['429', { rateLimitRate: 0.6, retryAfterSeconds: 1 }],
  ['hang', { hangRate: 0.4, hangMs: 8_000 }],
  ['mixed', { latencyMs: [0, 800], errorRate: 0.2, rateLimitRate: 0.2, hangRate: 0.15, retryAfterSeconds: 1 }],
];

function pickMode(rng: Prng): [string, ProviderFaultMode | null] {
  return rng.pick(faultModes);
}

const slowProvidersScenario: Scenario = {
  name: 'slow-provider-apis',
  async run(ctx) {
    // Stripe subscription events (each re-reads the subscription) and RevenueCat subscription
    // events (each re-reads the subscriber), with invoices and token packs for balances, paced
    // while both provider APIs switch between slow, 5xx, 429 + Retry-After and hanging past the
    // client timeout. After the faults stop, everything must converge on the providers' truth.
    const stripeUsers = Array.from({ length: size(ctx, 12, 32) }, (_, i) => `slowapi-s${i}`);
    const rcUsers = Array.from({ length: size(ctx, 12, 32) }, (_, i) => `slowapi-r${i}`);
    const lifecycles = stripeLifecycles(ctx.rng, 'slowapi', stripeUsers);
    const rcLifecycles: RevenueCatLifecycle[] = rcUsers.map((user, i) =>
      revenueCatLifecycle(ctx.rng, 'slowapi-rc', i, user),
    );
    const stripeTimeline = new StripeTimeline(ctx.cluster.stripe, lifecycles);
    const rcTimeline = new RevenueCatTimeline(ctx.cluster.revenueCat, rcLifecycles);
    const packs: SimulatedEvent[] = [];
    for (let n = 0; n < size(ctx, 8, 40); n += 1) {
      const user = ctx.rng.pick(rcUsers);
      packs.push(rcPurchase(`slowapi-pack-${n}`, user));
      ctx.expected.set(user, (ctx.expected.get(user) ?? 0) + 100);
    }
    for (const user of rcUsers) if (!ctx.expected.has(user)) ctx.expected.set(user, 0);
    modelStripe(ctx, lifecycles);
    for (const lifecycle of rcLifecycles) ctx.plans.revenueCatPlans.set(lifecycle.userId, lifecycle.expectedPlan);
    const events = ctx.rng.shuffle([
      ...lifecycles.flatMap((lifecycle) => lifecycle.events.map(({ event }) => event)),
      ...rcLifecycles.flatMap((lifecycle) => lifecycle.events.map(({ event }) => event)),
      ...packs,
    ]);
    ctx.events.push(...events);

    const stripeFaults = ctx.cluster.stripe.faults;
    const rcFaults = ctx.cluster.revenueCat.faults;
    const stripeRng = ctx.rng.fork('fake-stripe');
    const rcRng = ctx.rng.fork('fake-revenuecat');
    const modesUsed = new Set<string>();
    const switchModes = () => {
      const [stripeName, stripeMode] = pickMode(ctx.rng);
      const [rcName, rcMode] = pickMode(ctx.rng);
      stripeFaults.set(stripeMode, () => stripeRng.next());
      rcFaults.set(rcMode, () => rcRng.next());
      modesUsed.add(`stripe ${stripeName}`).add(`revenuecat ${rcName}`);
    };
    const before = { stripe: { ...stripeFaults.counts }, rc: { ...rcFaults.counts } };
    switchModes();
    const deliveries = ctx.sim.deliverAll(events, 6, size(ctx, 10_000, 45_000), (event) => {
      stripeTimeline.advance(event);
      rcTimeline.advance(event);
    });
    let switches = 1;
    try {
      switches += await repeatWhile(deliveries, switchModes, () => ctx.rng.int(400, 1_500));
    } finally {
      stripeFaults.set(null);
      rcFaults.set(null);
    }
    ctx.faults.push(...[...modesUsed].sort(), `fault modes switched ×${switches}`);
    const served = (now: typeof stripeFaults.counts, then: typeof stripeFaults.counts) =>
      `${now.served429 - then.served429}× 429, ${now.served5xx - then.served5xx}× 5xx, ${
        now.hung - then.hung
      } hung past the client timeout, ${now.delayed - then.delayed} slow, of ${now.requests - then.requests} requests under faults`;
    ctx.notes.push(
      `fake Stripe served ${served(stripeFaults.counts, before.stripe)}`,
      `fake RevenueCat served ${served(rcFaults.counts, before.rc)}`,
    );

    // The faults have stopped: everything must converge without help.
    const started = Date.now();
    const pending = await settle(ctx.cluster.db, 90_000);
    const ids = events.map((event) => event.id);
    const { rows } = await sql<{ attempts: number; deferrals: number; retried: number }>`
      SELECT coalesce(sum(attempts), 0)::int AS attempts, coalesce(sum(deferrals), 0)::int AS deferrals,
             count(*) FILTER (WHERE attempts > 1 OR deferrals > 0)::int AS retried
        FROM inbox_events WHERE provider_event_id = ANY(${ids})`.execute(ctx.cluster.db);
    ctx.notes.push(
      `converged ${((Date.now() - started) / 1000).toFixed(1)} s after the faults stopped${
        pending.length > 0 ? ` (still pending: ${pending.join(', ')})` : ''
      }; ${rows[0]?.retried ?? 0} of ${events.length} events needed more than one try (${rows[0]?.attempts ?? 0} attempts, ${rows[0]?.deferrals ?? 0} retry-later deferrals)`,
    );
  },
};

export const providerScenarios: Scenario[] = [lifecycleScenario, slowProvidersScenario];
