import type { StripeApi } from '@tally/billing-core';
import { signal, testRedisUrl } from '@tally/billing-core/testing';
import { createLogger } from '@tally/platform';
import { workerEnvSchema } from '../../../apps/worker/src/config';
import { createMailer } from '../../../apps/worker/src/email/create-mailer';
import type { WorkerRuntime } from '../../../apps/worker/src/worker-runtime';
import type { FakeStripe } from '../../support/fakes/fake-stripe';
import { ledgerOf } from '../../support/ledger';
import { startStackWithFakeStripe, type TestStack } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';

/** The value of one exposition line (`series value`), or undefined when the series is absent. */
const seriesValue = (text: string, series: string) => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};
const missingEventsSeries = 'tally_reconcile_findings{kind="missing_events",service="worker"}';
const lastRunSeries = 'tally_reconcile_last_run_timestamp_seconds{service="worker"}';
const loopOf = (worker: WorkerRuntime) => {
  if (!worker.loops.reconcile) throw new Error('the reconcile role started no loop');
  return worker.loops.reconcile;
};

describe('the scheduled Stripe reconciliation (worker role reconcile)', () => {
  let stack: TestStack;
  let fake: FakeStripe;
  let stripe: StripeApi;

  beforeAll(async () => {
    ({ stack, fake } = await startStackWithFakeStripe());
    stripe = fake.api();
  });
  afterEach(() => stack.stopWorkers());
  afterAll(() => stack.stop());

  const eventListings = () => fake.requests.filter((request) => request.path === '/v1/events').length;
  /** A pack purchase Stripe has (listed by its Events API) whose webhook never arrived. */
  const lostPurchase = () => {
    const userId = stripeId('user');
    const paymentIntentId = stripeId('pi');
    const event = JSON.parse(
      stripeEventBody(
        'payment_intent.succeeded',
        stripePackIntent({ id: paymentIntentId, userId, customer: stripeId('cus') }),
      ),
    );
    fake.putEvent(event);
    return { userId, paymentIntentId, eventId: event.id as string };
  };

  it('is off by default and with WORKER_ROLES=all, and runs only when named', async () => {
    const env = { DATABASE_URL: 'postgres://tally@127.0.0.1:5432/tally', REDIS_URL: testRedisUrl() };
    const unset = workerEnvSchema.parse(env).WORKER_ROLES;
    const all = workerEnvSchema.parse({ ...env, WORKER_ROLES: 'all' }).WORKER_ROLES;
    expect(unset).not.toContain('reconcile');
    expect(all).toEqual(unset);
    expect(workerEnvSchema.parse({ ...env, WORKER_ROLES: 'all,reconcile' }).WORKER_ROLES).toEqual([
      ...unset,
      'reconcile',
    ]);

    // A worker with every default role, a Stripe API and a lost event: no loop, no listing, no series.
    lostPurchase();
    const before = eventListings();
    const worker = stack.startWorker({
      roles: all,
      reconcile: { intervalMs: 50, windowDays: 3, stripe },
      email: {
        mailer: createMailer({
          smtpUrl: undefined,
          from: 'Tally <billing@tally.test>',
          logger: createLogger({ name: 'test', level: 'silent' }),
        }),
      },
    });
    expect(worker.loops.reconcile).toBeUndefined();
    await worker.refreshGauges();
    expect(await worker.metrics.registry.metrics()).not.toContain('tally_reconcile');
    await stack.stopWorkers();
    expect(eventListings()).toBe(before);
  });

  it('runOnce backfills an event the inbox lacks, which is then credited, and sets the findings metric', async () => {
    const worker = stack.startWorker({
      roles: ['inbox', 'reconcile'],
      reconcile: { intervalMs: 3600_000, windowDays: 3, stripe },
    });
    const loop = loopOf(worker);
    // The loop's first tick (at start) and this one find what the earlier test left: nothing new after that.
    await loop.runOnce();
    let text = await worker.metrics.registry.metrics();
    expect(seriesValue(text, missingEventsSeries)).toBe(0);
    const firstRun = seriesValue(text, lastRunSeries) ?? 0;
    expect(firstRun).toBeGreaterThan(0);

    const lost = lostPurchase();
    await loop.runOnce();
    text = await worker.metrics.registry.metrics();
    expect(seriesValue(text, missingEventsSeries)).toBe(1);
    expect(seriesValue(text, 'tally_reconcile_findings{kind="events_without_rows",service="worker"}')).toBe(0);
    expect(seriesValue(text, 'tally_reconcile_findings{kind="ledger_rows_without_event",service="worker"}')).toBe(0);
    expect(seriesValue(text, lastRunSeries)).toBeGreaterThanOrEqual(firstRun);
    const row = await stack.finishedInboxRow('stripe', lost.eventId);
    expect(row).toMatchObject({
      status: 'processed',
      source: 'backfill',
      outcome_code: 'credited',
      user_id: lost.userId,
    });
    const ledger = await ledgerOf(stack.db, lost.userId, ['reference', 'amount', 'inbox_event_id']);
    expect(ledger).toEqual([
      { reference: `stripe:payment:${lost.paymentIntentId}`, amount: 100, inbox_event_id: row.id },
    ]);

    // A second run finds nothing new, and the metric says so.
    await loop.runOnce();
    text = await worker.metrics.registry.metrics();
    expect(seriesValue(text, missingEventsSeries)).toBe(0);
  });

  it('two replicas ticking at once do one backfill pass: the second skips while the first holds the lock', async () => {
    const lost = lostPurchase();
    // Replica A's Stripe port stops at its first listing until the test opens the gate, so A is
    // known to be mid-run (holding the reconciliation lock) when replica B ticks.
    const aListing = signal();
    const gate = signal();
    const gated: StripeApi = {
      ...stripe,
      async listEvents(params) {
        aListing.resolve();
        await gate.promise;
        return stripe.listEvents(params);
      },
    };
    const before = eventListings();
    const a = stack.startWorker({
      roles: ['reconcile'],
      reconcile: { intervalMs: 3600_000, windowDays: 3, stripe: gated },
    });
    try {
      await aListing.promise;
      const b = stack.startWorker({ roles: ['reconcile'], reconcile: { intervalMs: 3600_000, windowDays: 3, stripe } });
      const bLoop = loopOf(b);
      // B's tick at start and one more: both find the lock held and skip, listing nothing.
      await bLoop.runOnce();
      expect(eventListings()).toBe(before);
      expect(await stack.inboxRows('stripe', lost.eventId)).toEqual([]);
      expect(seriesValue(await b.metrics.registry.metrics(), lastRunSeries)).toBe(0);

      gate.resolve();
      // Stopping A's loop waits for its pass to finish.
      await loopOf(a).stop();
      expect(eventListings()).toBe(before + 1);
      expect(seriesValue(await a.metrics.registry.metrics(), missingEventsSeries)).toBe(1);
      const rows = await stack.inboxRows('stripe', lost.eventId);
      expect(rows).toEqual([expect.objectContaining({ source: 'backfill' })]);

      // The lock went with A's pass: B's next tick runs, and finds nothing new.
      await bLoop.runOnce();
      expect(eventListings()).toBe(before + 2);
      const text = await b.metrics.registry.metrics();
      expect(seriesValue(text, lastRunSeries)).toBeGreaterThan(0);
      expect(seriesValue(text, missingEventsSeries)).toBe(0);
    } finally {
      // A failed assertion must not leave A's pass stuck at the gate (stopping the workers waits for it).
      gate.resolve();
    }
  });
});
