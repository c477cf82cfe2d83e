import { type RetryLaterSettings, verifyLedger } from '@tally/billing-core';
import { FakeRevenueCat } from './fakes/fake-revenuecat';
import { FakeStripe } from './fakes/fake-stripe';
import { TestStack, type TestStackOptions, type WorkerSettings } from './stack';

/**
 * The set-ups the end-to-end files share. Each makes its objects when the describe block is
 * declared and registers the block's hooks: started in beforeAll, stopped in afterAll (the
 * fakes with the stack). The tests use the objects as they are; nothing is started twice.
 */
export interface SuiteStackOptions extends TestStackOptions {
  /** One worker started with the stack, with these settings (`{}` for the defaults); none when absent. */
  worker?: WorkerSettings;
}

/** Deferrals a few hundred milliseconds apart, for the tests of events that wait for another. */
export const quickRetryLater: RetryLaterSettings = { baseDelayMs: 100, maxDelayMs: 300, maxWaitMs: 60_000 };

/** The whole stack for the tests of this describe block (and a worker with `worker`). */
export function suiteStack(options: SuiteStackOptions = {}): TestStack {
  const stack = new TestStack(options.redisUrl, options.http);
  beforeAll(() => begin(stack, options));
  afterAll(() => stack.stop());
  return stack;
}

/**
 * A stack whose Stripe port is a fake Stripe of its own (`fake`, its client timing out after
 * `stripeTimeoutMs`, 5 s by default), for this describe block.
 */
export function suiteStackWithFakeStripe(options: SuiteStackOptions & { stripeTimeoutMs?: number } = {}): {
  stack: TestStack;
  fake: FakeStripe;
} {
  const { stack, stripe } = suiteStackWithFakes({ ...options, fakes: ['stripe'] });
  return { stack, fake: stripe };
}

/**
 * A stack whose RevenueCat port is a fake RevenueCat of its own (`fake`, its client timing out
 * after `revenueCatTimeoutMs`, 2 s by default), for this describe block.
 */
export function suiteStackWithFakeRevenueCat(options: SuiteStackOptions & { revenueCatTimeoutMs?: number } = {}): {
  stack: TestStack;
  fake: FakeRevenueCat;
} {
  const { stack, revenueCat } = suiteStackWithFakes({ ...options, fakes: ['revenueCat'] });
  return { stack, fake: revenueCat };
}

/** A stack whose Stripe and RevenueCat ports are fakes of its own (`fakes`: both unless named). */
export function suiteStackWithFakes(
  options: SuiteStackOptions & {
    fakes?: ('stripe' | 'revenueCat')[];
    stripeTimeoutMs?: number;
    revenueCatTimeoutMs?: number;
  } = {},
): { stack: TestStack; stripe: FakeStripe; revenueCat: FakeRevenueCat } {
  const { fakes = ['stripe', 'revenueCat'], stripeTimeoutMs, revenueCatTimeoutMs, ...rest } = options;
  const stack = new TestStack(options.redisUrl, options.http);
  const stripe = new FakeStripe();
  const revenueCat = new FakeRevenueCat();
  beforeAll(async () => {
    const ports = { ...rest.ports };
    if (fakes.includes('stripe')) {
      await stripe.listen();
      stack.stopAlso(() => stripe.stop());
      ports.stripe = stripe.api(stripeTimeoutMs);
    }
    if (fakes.includes('revenueCat')) {
      await revenueCat.listen();
      stack.stopAlso(() => revenueCat.stop());
      ports.revenueCat = revenueCat.api(revenueCatTimeoutMs);
    }
    await begin(stack, { ...rest, ports });
  });
  afterAll(() => stack.stop());
  return { stack, stripe, revenueCat };
}

async function begin(stack: TestStack, { worker, redisUrl: _url, http: _http, ...options }: SuiteStackOptions) {
  await stack.begin(options);
  if (worker) stack.startWorker(worker);
}

/** Ends every test of the describe block with the ledger verified clean (lots, balances, draws). */
export function verifyLedgerAfterEach(stack: TestStack): void {
  afterEach(async () => {
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
}
