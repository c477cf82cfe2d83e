import { queueCatalog } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { RunningProcess } from '../../support/built-process';
import { stripeTokenPackPayment } from '../../support/events';
import { type FakeStripe, fakeStripeSecretKey } from '../../support/fakes/fake-stripe';
import { eventually, signStripe, startStackWithFakeStripe, TestStack } from '../../support/stack';
import {
  stripeAnnualInvoice,
  stripeEventBody,
  stripeId,
  stripePackIntent,
  stripeRefundedCharge,
  stripeSubscription,
} from '../../support/stripe-events';
import { suiteStack } from '../../support/suite';

describe('metrics: each process shows what it moves, from zero', () => {
  const stack = suiteStack();

  it('ingest exports webhook counters at zero before any webhook, and no worker families', async () => {
    const text = await (await fetch(`http://127.0.0.1:${stack.ingest.port}/metrics`)).text();
    expect(text).toContain('tally_webhook_requests_total{provider="stripe",outcome="accepted",service="ingest"} 0');
    expect(text).toContain('tally_webhook_requests_total{provider="revenuecat",outcome="error",service="ingest"} 0');
    for (const family of ['tally_inbox_events_parked_total', 'tally_queue_jobs', 'tally_relay_reenqueued_total']) {
      expect(text).not.toContain(family);
    }
  });

  it('the worker exports the parked counter before anything is parked, and no webhook counters', async () => {
    const worker = stack.startWorker();
    await worker.refreshGauges();
    const text = await worker.metrics.registry.metrics();
    expect(text).toContain(
      'tally_inbox_events_parked_total{provider="stripe",code="attempts_exhausted",service="worker"} 0',
    );
    expect(text).toContain('tally_ledger_reference_conflicts_total{provider="revenuecat",service="worker"} 0');
    expect(text).toContain('tally_queue_jobs{queue="inbox",state="waiting",service="worker"} 0');
    expect(text).toContain('tally_inbox_oldest_unprocessed_age_seconds{service="worker"} 0');
    expect(text).not.toContain('tally_webhook_requests_total');
    await stack.stopWorkers();
  });
});

describe('metrics: the operations series exist from zero and move when events flow', () => {
  const stack = suiteStack();

  const value = (text: string, series: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('exposes ledger, parked-by-type, lag, every catalog queue and saga/installment states, and they move', async () => {
    // The inbox role moves the counters, the relay role exports the scrape-time gauges.
    const worker = stack.startWorker({ roles: ['inbox', 'relay'] });
    await worker.refreshGauges();
    let text = await worker.metrics.registry.metrics();
    const credits = 'tally_ledger_entries{direction="credit",reason="token_pack_purchase",service="worker"}';
    const creditedTokens = 'tally_ledger_tokens{direction="credit",reason="token_pack_purchase",service="worker"}';
    const parked = 'tally_inbox_events_parked{provider="stripe",type="payment_intent.succeeded",service="worker"}';
    expect(value(text, credits)).toBe(0);
    expect(value(text, creditedTokens)).toBe(0);
    expect(value(text, 'tally_ledger_entries{direction="debit",reason="stripe_refund",service="worker"}')).toBe(0);
    expect(value(text, parked)).toBe(0);
    expect(value(text, 'tally_inbox_events_parked{provider="revenuecat",type="other",service="worker"}')).toBe(0);
    for (const status of ['received', 'processing', 'completed', 'failed']) {
      expect(value(text, `tally_studio_requests{status="${status}",service="worker"}`)).toBe(0);
    }
    for (const status of ['scheduled', 'processing', 'granted', 'void', 'failed']) {
      expect(value(text, `tally_stripe_installments{status="${status}",service="worker"}`)).toBe(0);
    }
    for (const queue of Object.values(queueCatalog)) {
      expect(value(text, `tally_queue_jobs{queue="${queue.name}",state="waiting",service="worker"}`)).toBe(0);
    }
    expect(value(text, 'tally_inbox_event_lag_seconds_count{service="worker",provider="stripe"}')).toBeUndefined();
    // The reconcile series belong to processes with the reconcile role only.
    expect(text).not.toContain('tally_reconcile_findings');

    const paid = stripeTokenPackPayment({
      eventId: 'evt_metrics_paid',
      paymentIntentId: 'pi_metrics_paid',
      userId: 'm1',
    });
    const bad = stripeTokenPackPayment({
      eventId: 'evt_metrics_bad',
      paymentIntentId: 'pi_metrics_bad',
      userId: 'm1',
      packId: 'no_such_pack',
    });
    for (const body of [paid, bad]) expect((await stack.postStripe(body, signStripe(body))).status).toBe(200);
    await eventually('both events to finish', async () => {
      const rows = await stack.db.selectFrom('inbox_events').select('status').execute();
      return rows.length === 2 && rows.every((row) => row.status === 'processed' || row.status === 'failed');
    });
    await worker.refreshGauges();
    text = await worker.metrics.registry.metrics();
    expect(value(text, credits)).toBe(1);
    expect(value(text, creditedTokens)).toBe(100);
    expect(value(text, parked)).toBe(1);
    expect(value(text, 'tally_inbox_event_lag_seconds_count{service="worker",provider="stripe"}')).toBe(1);
    expect(
      value(text, 'tally_inbox_events_parked_total{provider="stripe",code="invalid_event",service="worker"}'),
    ).toBe(1);
    await stack.stopWorkers();
  });

  it('a worker with the reconcile role exposes the reconciliation series at zero', async () => {
    const worker = stack.startWorker({
      roles: ['reconcile'],
      reconcile: { intervalMs: 60_000, windowDays: 3, stripe: undefined },
    });
    const text = await worker.metrics.registry.metrics();
    expect(text).toContain('tally_reconcile_findings{kind="missing_events",service="worker"} 0');
    expect(text).toContain('tally_reconcile_findings{kind="ledger_rows_without_event",service="worker"} 0');
    await stack.stopWorkers();
  });
});

describe('metrics: a worker exposes only the families of its roles', () => {
  let stack: TestStack;
  const processes: RunningProcess[] = [];
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(async () => {
    await Promise.all(processes.map((child) => child.stop()));
    await stack.stop();
  });

  const inboxFamilies = [
    'tally_inbox_event_lag_seconds',
    'tally_inbox_events_deferred_total',
    'tally_inbox_events_parked_total',
    'tally_inbox_processing_duration_seconds',
    'tally_ledger_reference_conflicts_total',
    'tally_revenuecat_customers_created_total',
  ];
  // The relay's counter and the gauges read from Postgres and Redis at scrape time.
  const relayFamilies = [
    'tally_app_webhook_messages',
    'tally_app_webhook_oldest_pending_age_seconds',
    'tally_inbox_events_parked',
    'tally_inbox_oldest_unprocessed_age_seconds',
    'tally_ledger_entries',
    'tally_ledger_tokens',
    'tally_queue_jobs',
    'tally_relay_reenqueued_total',
    'tally_stripe_installments',
    'tally_studio_requests',
  ];

  // The app-webhooks consumer's counters (exported with the role, whether or not APP_WEBHOOK_URL is set).
  const appWebhookFamilies = [
    'tally_app_webhook_attempts_total',
    'tally_app_webhook_messages_delivered_total',
    'tally_app_webhook_messages_failed_total',
  ];

  // The auto-topup role's counter of runs by outcome.
  const autoTopupFamilies = ['tally_auto_topup_attempts_total'];

  // The apple-consumption role's counter of App Store consumption requests by outcome.
  const appleConsumptionFamilies = ['tally_apple_consumption_requests_total'];
  // The Google Play roles' (google-play-consume, google-play-voided) consumes, oldest unconsumed purchase and voided passes.
  const googlePlayFamilies = [
    'tally_google_play_consumes_total',
    'tally_google_play_oldest_unconsumed_age_seconds',
    'tally_google_play_voided_pass_last_run_timestamp_seconds',
    'tally_google_play_voided_passes_total',
    'tally_google_play_voided_purchases_total',
  ];

  // The metrics server's own family, whatever the roles: what Node's HTTP layer ended before the app saw it.
  const serverFamilies = ['tally_http_client_errors_total'];

  /** Starts the built worker with these roles and scrapes its /metrics over HTTP. */
  async function scrape(roles: string): Promise<string> {
    const worker = new RunningProcess('worker', {
      DATABASE_URL: stack.database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: stack.prefix,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '5000',
      WORKER_METRICS_PORT: '0',
      WORKER_ROLES: roles,
    });
    processes.push(worker);
    const port = Number((await worker.waitForLog('worker started')).metricsPort);
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    return response.text();
  }
  /** Tally's own families in a scrape (Node's defaults, tally_process_* and tally_nodejs_*, left out). */
  const familiesIn = (text: string) =>
    [...text.matchAll(/^# TYPE (tally_\w+) /gm)]
      .map(([, name]) => name)
      .filter((name) => !/^tally_(process|nodejs)_/.test(name ?? ''))
      .sort();

  it('the studio consumer exposes none of the inbox, relay or database families; inbox and relay only their own', async () => {
    const [studio, inbox, relay, all] = await Promise.all([
      scrape('studio'),
      scrape('inbox'),
      scrape('relay'),
      scrape('all'),
    ]);
    expect({
      studio: familiesIn(studio),
      inbox: familiesIn(inbox),
      relay: familiesIn(relay),
      all: familiesIn(all),
    }).toEqual({
      studio: serverFamilies,
      inbox: [...inboxFamilies, ...serverFamilies].sort(),
      relay: [...relayFamilies, ...serverFamilies].sort(),
      // all leaves reconcile out, so no reconcile series either.
      all: [
        ...inboxFamilies,
        ...relayFamilies,
        ...appWebhookFamilies,
        ...autoTopupFamilies,
        ...appleConsumptionFamilies,
        ...googlePlayFamilies,
        ...serverFamilies,
      ].sort(),
    });
    // Node's defaults are still there, and each family's series start at zero.
    expect(studio).toContain('tally_process_cpu_user_seconds_total{service="worker"}');
    expect(inbox).toContain(
      'tally_inbox_events_parked_total{provider="stripe",code="attempts_exhausted",service="worker"} 0',
    );
    expect(relay).toContain('tally_queue_jobs{queue="inbox",state="waiting",service="worker"} 0');
    expect(relay).toContain('tally_inbox_oldest_unprocessed_age_seconds{service="worker"} 0');
  });
});

describe("metrics: the built worker's /metrics over HTTP moves with a refund, an annual plan and a studio request", () => {
  let stack: TestStack;
  let fake: FakeStripe;
  let worker: RunningProcess;
  let metricsUrl: string;

  beforeAll(async () => {
    ({ stack, fake } = await startStackWithFakeStripe());
    // The compiled worker: inbox consumer, relay (which exports the scrape-time gauges),
    // installments loop and studio sweeper, but no studio consumer, so a studio job stays waiting
    // in its queue for the depth gauge to show.
    worker = new RunningProcess('worker', {
      DATABASE_URL: stack.database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: stack.prefix,
      WORKER_METRICS_PORT: '0',
      WORKER_ROLES: 'inbox,relay,installments,studio-sweeper',
      PAYMENT_ENVIRONMENTS: 'production,sandbox',
      STRIPE_SECRET_KEY: fakeStripeSecretKey,
      STRIPE_API_BASE_URL: fake.baseUrl,
      LOG_LEVEL: 'info',
    });
    const started = await worker.waitForLog('worker started');
    metricsUrl = `http://127.0.0.1:${Number(started.metricsPort)}/metrics`;
  });
  afterAll(async () => {
    await worker?.stop();
    await stack?.stop();
  });

  const scrape = async () => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.text();
  };
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  const series = {
    refundDebits: 'tally_ledger_entries{direction="debit",reason="stripe_refund",service="worker"}',
    refundedTokens: 'tally_ledger_tokens{direction="debit",reason="stripe_refund",service="worker"}',
    packCredits: 'tally_ledger_entries{direction="credit",reason="token_pack_purchase",service="worker"}',
    scheduledInstallments: 'tally_stripe_installments{status="scheduled",service="worker"}',
    receivedStudio: 'tally_studio_requests{status="received",service="worker"}',
    studioWaiting: 'tally_queue_jobs{queue="studio",state="waiting",service="worker"}',
    stripeLag: 'tally_inbox_event_lag_seconds_count{service="worker",provider="stripe"}',
  };

  it('shows each series at zero, then a refund debit, eleven scheduled installments, a received studio request and its waiting job', async () => {
    const before = await scrape();
    expect(Object.fromEntries(Object.entries(series).map(([name, line]) => [name, value(before, line)]))).toEqual({
      refundDebits: 0,
      refundedTokens: 0,
      packCredits: 0,
      scheduledInstallments: 0,
      receivedStudio: 0,
      studioWaiting: 0,
      stripeLag: undefined,
    });

    const userId = stripeId('user');
    const customer = stripeId('cus');
    const paymentIntentId = stripeId('pi');
    const finished = async (eventId: string) => {
      const row = await stack.finishedInboxRow('stripe', eventId);
      expect({ eventId, status: row.status }).toEqual({ eventId, status: 'processed' });
    };
    // A pack bought, then refunded in full: one credit, one debit.
    await finished(
      await stack.deliverStripe(
        stripeEventBody('payment_intent.succeeded', stripePackIntent({ id: paymentIntentId, userId, customer })),
      ),
    );
    await finished(
      await stack.deliverStripe(
        stripeEventBody(
          'charge.refunded',
          stripeRefundedCharge({ id: stripeId('ch'), paymentIntent: paymentIntentId }),
        ),
      ),
    );
    // An annual plan paid: a twelfth now, eleven installments scheduled.
    const subscriptionId = stripeId('sub');
    fake.putSubscription(stripeSubscription({ id: subscriptionId, customer, priceId: 'price_premium_annual', userId }));
    await finished(
      await stack.deliverStripe(
        stripeEventBody('customer.subscription.created', { id: subscriptionId, object: 'subscription', customer }),
      ),
    );
    await finished(
      await stack.deliverStripe(
        stripeEventBody(
          'invoice.paid',
          stripeAnnualInvoice({ id: stripeId('in'), subscription: subscriptionId, customer }),
        ),
      ),
    );
    // A studio generation (free allowance): received, its job waiting for a studio worker.
    const created = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
      method: 'POST',
      body: { kind: 'image_edit', input: { prompt: 'a lighthouse' } },
    });
    expect(created.status).toBe(202);

    // The lag histogram is observed just after an event's commit: wait for the fourth observation.
    const after = await eventually('the worker to observe the lag of all four events', async () => {
      const text = await scrape();
      return value(text, series.stripeLag) === 4 ? text : undefined;
    });
    expect(Object.fromEntries(Object.entries(series).map(([name, line]) => [name, value(after, line)]))).toEqual({
      refundDebits: 1,
      refundedTokens: 100,
      packCredits: 1,
      scheduledInstallments: 11,
      receivedStudio: 1,
      studioWaiting: 1,
      stripeLag: 4,
    });
    expect(
      value(
        after,
        'tally_ledger_entries{direction="credit",reason="subscription_annual_first_installment",service="worker"}',
      ),
    ).toBe(1);
  });
});
