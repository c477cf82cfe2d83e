import { findWallet, verifyLedger } from '@tally/billing-core';
import { sql } from 'kysely';
import { revenueCatTokenPackRefund, revenueCatTokenPurchase } from '../../support/events';
import { lotsOf } from '../../support/ledger';
import { stripeDispute, stripeEventBody, stripePackIntent, stripeRefundedCharge } from '../../support/stripe-events';
import { quickRetryLater, suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Every reference or lot source built from an outside id fits its column (product.md "What a void
 * means, what a rollover keeps"; migration 0034): ids of 255 characters, the longest the inbox
 * accepts, bought, refunded and disputed end to end through signed webhooks, the real worker and
 * the fake Stripe over HTTP. Before 0034, `revenuecat:refund:{id}` and `lot:opening:{userId}` of
 * such ids broke the ledger's 255-character limit and the refund parked.
 */
const long = (prefix: string) => `${prefix}${'x'.repeat(255 - prefix.length)}`;

describe('outside ids of 255 characters', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: { retryLater: quickRetryLater } });

  const references = (userId: string) =>
    stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'balance_after'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();

  it('credits and refunds a RevenueCat pack whose event and store transaction ids are 255 characters', async () => {
    const userId = long('rc-long-user-');
    const transactionId = long('GPA.');
    const buyId = long('rc-buy-');
    const body = JSON.parse(revenueCatTokenPurchase({ id: buyId, userId }));
    body.event.transaction_id = transactionId;
    await stack.postRevenueCat(JSON.stringify(body));
    expect(await stack.finishedInboxRow('revenuecat', buyId)).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
    });

    const refundId = long('rc-refund-');
    await stack.postRevenueCat(revenueCatTokenPackRefund({ id: refundId, userId, transactionId }));
    expect(await stack.finishedInboxRow('revenuecat', refundId)).toMatchObject({
      status: 'processed',
      outcome_code: 'refunded',
    });
    expect(await references(userId)).toEqual([
      { reference: `revenuecat:event:${buyId}`, amount: 100, balance_after: 100 },
      { reference: `revenuecat:refund:${transactionId}`, amount: -100, balance_after: 0 },
    ]);
    expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 0 });
  });

  it('pays, refunds in part and disputes a Stripe pack of a 255-character user, its opening lot included', async () => {
    const userId = long('web-long-user-');
    const ids = { paymentIntent: long('pi_'), charge: long('ch_'), dispute: long('dp_'), customer: long('cus_') };
    const deliver = async (type: string, object: Record<string, unknown>) =>
      stack.finishedInboxRow('stripe', await stack.deliverStripe(stripeEventBody(type, object)));

    const paid = await deliver(
      'payment_intent.succeeded',
      stripePackIntent({ id: ids.paymentIntent, userId, customer: ids.customer }),
    );
    expect(paid).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    // An entry old code posted without lots: the next posting closes the gap with `lot:opening:{userId}`.
    await sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
      VALUES (${userId}, 'test:old:long-user', 7, 100, 107, 'test_old_credit')`.execute(stack.db);

    const refunded = await deliver(
      'charge.refunded',
      stripeRefundedCharge({ id: ids.charge, paymentIntent: ids.paymentIntent, amountRefunded: 250 }),
    );
    expect(refunded).toMatchObject({ status: 'processed' });
    const dispute = { id: ids.dispute, charge: ids.charge, paymentIntent: ids.paymentIntent };
    fake.putDispute(stripeDispute({ ...dispute, withdrawn: true }));
    expect(
      await deliver('charge.dispute.funds_withdrawn', stripeDispute({ ...dispute, withdrawn: true })),
    ).toMatchObject({
      status: 'processed',
    });
    fake.putDispute(stripeDispute({ ...dispute, reinstated: true }));
    expect(
      await deliver('charge.dispute.funds_reinstated', stripeDispute({ ...dispute, reinstated: true })),
    ).toMatchObject({ status: 'processed' });

    // 100 credited; 50 refunded (250 of 499, floored); the other 50 withdrawn, then given back (the
    // payment still owes them after its refund). The 7 of the old entry sit in the opening lot.
    expect(await references(userId)).toEqual([
      { reference: `stripe:payment:${ids.paymentIntent}`, amount: 100, balance_after: 100 },
      { reference: 'test:old:long-user', amount: 7, balance_after: 107 },
      { reference: `stripe:refund:${ids.charge}:250`, amount: -50, balance_after: 57 },
      { reference: `stripe:dispute:${ids.dispute}`, amount: -50, balance_after: 7 },
      { reference: `stripe:dispute:${ids.dispute}:reinstated`, amount: 50, balance_after: 57 },
    ]);
    const lots = await lotsOf(stack.db, userId, ['source', 'remaining']);
    expect(lots).toEqual([
      { source: `stripe:payment:${ids.paymentIntent}`, remaining: 50 },
      { source: `lot:opening:${userId}`, remaining: 7 },
    ]);
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
