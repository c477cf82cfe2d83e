import { findWallet, type Provider, productionOnlyPolicy } from '@tally/billing-core';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../../support/events';
import { ledgerOf } from '../../support/ledger';
import { signStripe, TestStack } from '../../support/stack';

/** Sets one field of a JSON body's event (RevenueCat) or the event itself (Stripe). */
function withEventFields(body: string, fields: Record<string, unknown>, path: 'event' | 'root'): string {
  const json = JSON.parse(body);
  Object.assign(path === 'event' ? json.event : json, fields);
  return JSON.stringify(json);
}

describe('PAYMENT_ENVIRONMENTS=production, STRIPE_CONNECT_ACCOUNTS=acct_listed', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({
      policy: { ...productionOnlyPolicy, stripeConnectAccounts: new Set(['acct_listed']) },
    });
    stack.startWorker();
  });
  afterAll(() => stack.stop());

  /** The finished row's outcome and the environment it was stored with. */
  const rowOf = async (provider: Provider, providerEventId: string) => {
    const row = await stack.finishedInboxRow(provider, providerEventId);
    const { status, outcome_code, outcome_detail, livemode, environment } = row;
    return { status, outcome_code, outcome_detail, livemode, environment };
  };

  it('stores sandbox and test-mode purchases and credits nothing for them', async () => {
    const sandbox = withEventFields(
      revenueCatTokenPurchase({ id: 'rc-sandbox-1', userId: 'env-user' }),
      { environment: 'SANDBOX' },
      'event',
    );
    expect((await stack.postRevenueCat(sandbox)).status).toBe(200);
    const testMode = stripeTokenPackPayment({ eventId: 'evt_test_mode_1', userId: 'env-user' }); // livemode false
    expect((await stack.postStripe(testMode, signStripe(testMode))).status).toBe(200);

    expect(await rowOf('revenuecat', 'rc-sandbox-1')).toEqual({
      status: 'ignored',
      outcome_code: 'other_environment',
      outcome_detail: 'sandbox event; this deployment accepts production',
      livemode: false,
      environment: 'sandbox',
    });
    expect(await rowOf('stripe', 'evt_test_mode_1')).toMatchObject({
      status: 'ignored',
      outcome_code: 'other_environment',
      livemode: false,
      environment: 'sandbox',
    });

    // Production events of the same user are credited, so the wallet shows only those.
    const live = withEventFields(
      stripeTokenPackPayment({ eventId: 'evt_live_1', userId: 'env-user' }),
      { livemode: true },
      'root',
    );
    await stack.postStripe(live, signStripe(live));
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-production-1', userId: 'env-user' }));
    expect(await rowOf('stripe', 'evt_live_1')).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(await rowOf('revenuecat', 'rc-production-1')).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
    });
    expect(await findWallet(stack.db, 'env-user')).toEqual({ userId: 'env-user', balance: 200 });
    const references = await stack.db
      .selectFrom('ledger_entries')
      .select('reference')
      .where('user_id', '=', 'env-user')
      .orderBy('reference')
      .execute();
    expect(references.map((row) => row.reference)).toEqual([
      'revenuecat:event:rc-production-1',
      expect.stringMatching(/^stripe:payment:pi_/),
    ]);
  });

  it('credits nothing for a purchase that names no environment, and ignores Stripe Connect events of unlisted accounts', async () => {
    const noEnvironment = withEventFields(
      revenueCatTokenPurchase({ id: 'rc-no-env', userId: 'env-user-2' }),
      { environment: undefined },
      'event',
    );
    await stack.postRevenueCat(noEnvironment);
    const connect = withEventFields(
      stripeTokenPackPayment({ eventId: 'evt_connect_1', userId: 'env-user-2' }),
      { livemode: true, account: 'acct_someone_else' },
      'root',
    );
    await stack.postStripe(connect, signStripe(connect));
    expect(await rowOf('revenuecat', 'rc-no-env')).toMatchObject({
      status: 'ignored',
      outcome_code: 'unknown_environment',
    });
    expect(await rowOf('stripe', 'evt_connect_1')).toMatchObject({
      status: 'ignored',
      outcome_code: 'connect_account',
      outcome_detail: 'event of connected account acct_someone_else',
    });
    expect(await findWallet(stack.db, 'env-user-2')).toEqual({ userId: 'env-user-2', balance: 0 });
  });

  it('applies a Stripe Connect event of a listed account like any production event', async () => {
    const paymentIntentId = 'pi_connect_listed_1';
    const listed = withEventFields(
      stripeTokenPackPayment({ eventId: 'evt_connect_listed', paymentIntentId, userId: 'env-user-3' }),
      { livemode: true, account: 'acct_listed' },
      'root',
    );
    expect((await stack.postStripe(listed, signStripe(listed))).status).toBe(200);
    expect(await rowOf('stripe', 'evt_connect_listed')).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
    });
    expect(await findWallet(stack.db, 'env-user-3')).toEqual({ userId: 'env-user-3', balance: 100 });
    const ledger = await ledgerOf(stack.db, 'env-user-3', ['reference', 'amount']);
    expect(ledger).toEqual([{ reference: `stripe:payment:${paymentIntentId}`, amount: 100 }]);
  });
});
