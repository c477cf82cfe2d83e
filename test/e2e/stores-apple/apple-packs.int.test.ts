import { randomUUID } from 'node:crypto';
import { productionOnlyPolicy } from '@tally/billing-core';
import {
  appleCharge,
  appleNotificationBody,
  appleUser,
  appleVerifierFor,
  deliverApple,
  postApple,
} from '../../support/apple-notifications';
import { ApplePki } from '../../support/apple-signing';
import { eventually, readJson, type TestStack } from '../../support/stack';
import { quickRetryLater, suiteStack, verifyLedgerAfterEach } from '../../support/suite';

async function walletOf(stack: TestStack, userId: string) {
  return readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`));
}

const charge = appleCharge;

/**
 * Token packs bought through StoreKit (docs/stores-apple.md): ONE_TIME_CHARGE credits once per
 * transaction, REFUND takes back (the rest is debt), REFUND_REVERSED gives back, against real
 * Postgres over HTTP with notifications signed by a test CA.
 */
describe('App Store token packs', () => {
  const pki = ApplePki.create();
  const stack = suiteStack({ appleNotifications: appleVerifierFor(pki), worker: { retryLater: quickRetryLater } });
  afterAll(() => pki.dispose());
  verifyLedgerAfterEach(stack);

  it('credits a consumable once, under redelivery and under two notifications of one transaction', async () => {
    const { userId, token } = await appleUser(stack);
    const transactionId = `2000${Date.now()}`;
    const uuid = randomUUID();
    const body = appleNotificationBody(pki, { ...charge(transactionId, token), uuid });
    expect((await postApple(stack, body)).status).toBe(200);
    expect(await readJson(await postApple(stack, body))).toMatchObject({ status: 'duplicate' });
    expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
    });
    // Apple can name one transaction in a second notification (another notificationUUID).
    const second = await deliverApple(stack, pki, charge(transactionId, token));
    expect(await stack.finishedInboxRow('apple', second)).toMatchObject({
      status: 'ignored',
      outcome_code: 'transaction_already_credited',
    });
    const wallet = await walletOf(stack, userId);
    expect(wallet).toMatchObject({ balance: 100, debt: 0 });
    expect(wallet.lots).toEqual([
      expect.objectContaining({
        category: 'purchased',
        source: `apple:transaction:${transactionId}`,
        amount: 100,
        expiresAt: null,
      }),
    ]);
    const ledger = await readJson(await stack.apiRequest(`/v1/users/${userId}/ledger`));
    expect(ledger.entries.map((entry: { reference: string }) => entry.reference)).toEqual([
      `apple:transaction:${transactionId}`,
    ]);
    // The purchase is a payment of provider apple: support sees it.
    const support = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    expect(support.payments).toEqual([
      expect.objectContaining({
        provider: 'apple',
        providerPaymentId: transactionId,
        kind: 'token_pack',
        productId: 'tokens_100',
        amountMinor: 99,
        currency: 'usd',
        tokensGranted: 100,
      }),
    ]);
    // And so does the console's user page.
    const html = await stack.consoleUserPage(userId);
    expect(html).toContain(transactionId);
    expect(html).toContain(`apple:transaction:${transactionId}`);
    expect(html).toContain('0.99 USD');
  });

  it('credits the pack times its quantity', async () => {
    const { userId, token } = await appleUser(stack);
    const transactionId = `2001${Date.now()}`;
    const uuid = await deliverApple(stack, pki, {
      type: 'ONE_TIME_CHARGE',
      transaction: { transactionId, appAccountToken: token, quantity: 3, price: 2970 },
    });
    expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({ outcome_code: 'credited' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 300 });
  });

  it('moves no money for a token Tally never gave, or none', async () => {
    for (const token of [randomUUID(), null]) {
      const transactionId = `2002${Date.now()}${token ? 1 : 0}`;
      const uuid = await deliverApple(stack, pki, charge(transactionId, token));
      expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({
        status: 'ignored',
        outcome_code: 'unknown_account_token',
      });
      const payments = await stack.db
        .selectFrom('payments')
        .select('id')
        .where('provider_payment_id', '=', transactionId)
        .execute();
      expect(payments).toEqual([]);
    }
  });

  it('takes a refund back after spending, the rest as debt, once; a reversal gives it back and forgives the debt', async () => {
    const { userId, token } = await appleUser(stack);
    const transactionId = `2003${Date.now()}`;
    await stack.finishedInboxRow('apple', await deliverApple(stack, pki, charge(transactionId, token)));
    await stack.postPlainEntry({ userId, reference: `test:spend:${transactionId}`, amount: -70, reason: 'test_spend' });
    const revocationDate = Date.now();
    const refund = {
      type: 'REFUND',
      transaction: { transactionId, appAccountToken: token, revocationDate, revocationReason: 0 },
    };
    const refundUuid = await deliverApple(stack, pki, refund);
    expect(await stack.finishedInboxRow('apple', refundUuid)).toMatchObject({
      status: 'processed',
      outcome_code: 'partially_refunded',
    });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 0, debt: 70 });
    const shortfalls = await stack.db
      .selectFrom('take_back_shortfalls')
      .select(['source', 'shortfall', 'take_back_reference'])
      .where('user_id', '=', userId)
      .execute();
    expect(shortfalls).toEqual([
      { source: 'apple_refund', shortfall: 70, take_back_reference: `apple:refund:${transactionId}:${revocationDate}` },
    ]);
    // The same refund named again by another notification takes nothing more.
    const again = await deliverApple(stack, pki, refund);
    expect(await stack.finishedInboxRow('apple', again)).toMatchObject({ outcome_code: 'already_refunded' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 0, debt: 70 });
    const support = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    expect(support.payments[0]).toMatchObject({ status: 'refunded', tokensRefunded: 30, refundShortfall: 70 });

    const reversal = await deliverApple(stack, pki, {
      type: 'REFUND_REVERSED',
      transaction: { transactionId, appAccountToken: token },
    });
    expect(await stack.finishedInboxRow('apple', reversal)).toMatchObject({
      status: 'processed',
      outcome_code: 'refund_reversed',
    });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 30, debt: 0 });
    const reversedAgain = await deliverApple(stack, pki, {
      type: 'REFUND_REVERSED',
      transaction: { transactionId, appAccountToken: token },
    });
    expect(await stack.finishedInboxRow('apple', reversedAgain)).toMatchObject({ outcome_code: 'refund_reversed' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 30, debt: 0 });
    const afterReversal = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    expect(afterReversal.payments[0]).toMatchObject({ status: 'succeeded', tokensRefunded: 0, refundShortfall: 0 });
  });

  it('gives back, on reversal, what the refund took and what a later purchase paid of its debt', async () => {
    const { userId, token } = await appleUser(stack);
    const transactionId = `2005${Date.now()}`;
    await stack.finishedInboxRow('apple', await deliverApple(stack, pki, charge(transactionId, token)));
    await stack.postPlainEntry({ userId, reference: `test:spend:${transactionId}`, amount: -70, reason: 'test_spend' });
    const refunded = await deliverApple(stack, pki, {
      type: 'REFUND',
      transaction: { transactionId, appAccountToken: token, revocationDate: Date.now() },
    });
    expect(await stack.finishedInboxRow('apple', refunded)).toMatchObject({ outcome_code: 'partially_refunded' });
    // The next pack settles the 70 owed first: 30 are left of it.
    const next = await deliverApple(stack, pki, charge(`${transactionId}9`, token));
    expect(await stack.finishedInboxRow('apple', next)).toMatchObject({ outcome_code: 'credited' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 30, debt: 0 });
    const [refund] = await stack.db
      .selectFrom('apple_refunds')
      .select(['tokens_owed', 'tokens_taken', 'shortfall'])
      .where('transaction_id', '=', transactionId)
      .execute();
    expect(refund).toEqual({ tokens_owed: 100, tokens_taken: 100, shortfall: 0 });
    // Apple reverses the refund: the user gets the first pack back whole.
    const reversal = await deliverApple(stack, pki, {
      type: 'REFUND_REVERSED',
      transaction: { transactionId, appAccountToken: token },
    });
    expect(await stack.finishedInboxRow('apple', reversal)).toMatchObject({ outcome_code: 'refund_reversed' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 130, debt: 0 });
  });

  it('records a TEST notification and types it does not handle; a subscription notification parks while the API is not configured', async () => {
    const test = await deliverApple(stack, pki, { type: 'TEST' });
    expect(await stack.finishedInboxRow('apple', test)).toMatchObject({
      status: 'ignored',
      outcome_code: 'test_event',
    });
    const unknown = await deliverApple(stack, pki, { type: 'EXTERNAL_PURCHASE_TOKEN' });
    expect(await stack.finishedInboxRow('apple', unknown)).toMatchObject({
      status: 'ignored',
      outcome_code: 'unhandled_type',
    });
    const subscribed = await deliverApple(stack, pki, {
      type: 'SUBSCRIBED',
      transaction: {
        transactionId: `2006${Date.now()}`,
        productId: 'com.tally.premium.monthly',
        appAccountToken: randomUUID(),
      },
    });
    expect(await stack.finishedInboxRow('apple', subscribed)).toMatchObject({
      status: 'failed',
      outcome_code: 'not_configured',
    });
  });

  it('waits for the purchase when the refund comes first, then takes it all back; a declined refund moves nothing', async () => {
    const { userId, token } = await appleUser(stack);
    const transactionId = `2004${Date.now()}`;
    const refundUuid = await deliverApple(stack, pki, {
      type: 'REFUND',
      transaction: { transactionId, appAccountToken: token, revocationDate: Date.now() },
    });
    // The refund is told to wait (no attempt spent) while its purchase is not credited.
    const waiting = await eventually('the refund to wait', async () => {
      const row = await stack.inboxRow('apple', refundUuid);
      return row.outcome_code === 'waiting' ? row : undefined;
    });
    expect(waiting).toMatchObject({ status: 'received', attempts: 0 });
    await deliverApple(stack, pki, charge(transactionId, token));
    expect(await stack.finishedInboxRow('apple', refundUuid)).toMatchObject({ outcome_code: 'refunded' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 0, debt: 0 });
    const declined = await deliverApple(stack, pki, {
      type: 'REFUND_DECLINED',
      transaction: { transactionId, appAccountToken: token },
    });
    expect(await stack.finishedInboxRow('apple', declined)).toMatchObject({
      status: 'ignored',
      outcome_code: 'refund_declined',
    });
  });
});

describe('App Store notifications of another environment', () => {
  const pki = ApplePki.create();
  const stack = suiteStack({
    appleNotifications: appleVerifierFor(pki),
    policy: productionOnlyPolicy,
    worker: {},
  });
  afterAll(() => pki.dispose());

  it('stores a Sandbox purchase and marks it ignored when PAYMENT_ENVIRONMENTS is production', async () => {
    const { userId, token } = await appleUser(stack);
    const uuid = await deliverApple(stack, pki, { ...charge(`3000${Date.now()}`, token), environment: 'Sandbox' });
    expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({
      status: 'ignored',
      outcome_code: 'other_environment',
      environment: 'sandbox',
    });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 0 });
    const production = await deliverApple(stack, pki, charge(`3001${Date.now()}`, token));
    expect(await stack.finishedInboxRow('apple', production)).toMatchObject({ outcome_code: 'credited' });
    expect(await walletOf(stack, userId)).toMatchObject({ balance: 100 });
  });
});
