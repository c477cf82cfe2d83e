import { testRedisUrl } from '@tally/billing-core/testing';
import { attemptsOf, debit, fund, saveCard, setAutoTopup } from '../../support/auto-topup';
import { RunningProcess } from '../../support/built-process';
import { fakeStripeSecretKey } from '../../support/fakes/fake-stripe';
import { eventually } from '../../support/stack';
import { suiteStackWithFakeStripe } from '../../support/suite';

jest.setTimeout(60_000);

/**
 * Auto top-up's charge survives its worker (docs/auto-topup.md "Crashes"): the built worker
 * (role auto-topup) is killed with SIGKILL after Stripe made the charge and before its answer
 * reached it (the fake Stripe holds the answer). The attempt stays pending under the dead
 * worker's lease; once the lease ends another worker claims it, asks Stripe again with the same
 * idempotency key, gets the first answer back, and credits once: one PaymentIntent, one credit.
 */
describe('auto top-up with its worker killed between the charge and its record', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { roles: ['inbox'] } });
  let worker: RunningProcess | undefined;
  afterEach(async () => {
    worker?.signal('SIGKILL');
    await worker?.exited;
  });

  it('resumes the attempt with the same key: one charge, one credit', async () => {
    const userId = `killed-${Date.now().toString(36)}`;
    await saveCard(stack, fake, userId);
    await setAutoTopup(stack, userId, { threshold: 50 });
    await fund(stack, userId, 60);
    worker = new RunningProcess('worker', {
      DATABASE_URL: stack.database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: stack.prefix,
      WORKER_METRICS_PORT: '0',
      WORKER_ROLES: 'auto-topup',
      LOG_LEVEL: 'info',
      STRIPE_SECRET_KEY: fakeStripeSecretKey,
      STRIPE_API_BASE_URL: fake.baseUrl,
      STRIPE_TIMEOUT_MS: '2000',
      AUTO_TOPUP_INTERVAL_MS: '100',
      AUTO_TOPUP_LEASE_MS: '3000',
    });
    await worker.waitForLog('worker started');
    // The charge is made, its answer held far longer than the worker waits for it.
    fake.stallAfterChargeMs = 30_000;
    expect(await debit(stack, userId, 20, 'dip')).toBe(201);
    const { stripe_customer_id: customer } = await stack.db
      .selectFrom('saved_payment_methods')
      .select('stripe_customer_id')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const charges = () => fake.offSessionCharges.filter((charge) => charge.customer === customer);
    await eventually('the charge to be made', async () => charges().length > 0);
    worker.signal('SIGKILL');
    await worker.exited;
    const [left] = await attemptsOf(stack, userId);
    expect(left).toMatchObject({ status: 'pending', tries: 1, payment_intent_id: null });
    expect(await stack.db.selectFrom('topups').select('status').where('user_id', '=', userId).execute()).toEqual([
      { status: 'pending' },
    ]);

    // Another worker: it claims the attempt once the dead one's lease ends.
    stack.startWorker({ roles: ['auto-topup'], autoTopup: { intervalMs: 100, leaseMs: 3_000 } });
    const done = await eventually(
      'the attempt to succeed',
      async () => {
        const [attempt] = await attemptsOf(stack, userId);
        return attempt?.status === 'succeeded' ? attempt : undefined;
      },
      20_000,
    );
    expect(done.tries).toBe(2);
    const key = `autotopup:${done.id}`;
    expect(fake.requests.filter((request) => request.idempotencyKey === key)).toHaveLength(2);
    expect(charges()).toHaveLength(1);
    const credits = await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'topup')
      .execute();
    expect(credits).toEqual([{ reference: `stripe:payment:${done.payment_intent_id}`, amount: 100 }]);
  });
});
