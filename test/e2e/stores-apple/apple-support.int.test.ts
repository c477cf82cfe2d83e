import { randomUUID } from 'node:crypto';
import { appleCharge, appleUser, appleVerifierFor, deliverApple } from '../../support/apple-notifications';
import { ApplePki } from '../../support/apple-signing';
import { debit } from '../../support/auto-topup';
import { readJson } from '../../support/stack';
import { suiteStack, verifyLedgerAfterEach } from '../../support/suite';

/**
 * Support sees App Store purchases as it sees the others (docs/stores-apple.md, Operations): the
 * user's notifications (filed under the user the worker found, since Apple names none, only the
 * appAccountToken), the purchase as a payment, the credit and the refund's take-back in the
 * ledger, the refund with its shortfall, and the debt, in `GET /admin/users/{userId}` and on the
 * console's user page.
 */
describe('App Store purchases in the support view and the console', () => {
  const pki = ApplePki.create();
  const stack = suiteStack({ appleNotifications: appleVerifierFor(pki), worker: { roles: ['inbox', 'relay'] } });
  afterAll(() => pki.dispose());
  verifyLedgerAfterEach(stack);

  it('shows the purchase, its refund, the take-back and the debt', async () => {
    const { userId, token } = await appleUser(stack, 'asupport');
    const transactionId = `7000${Date.now()}`;
    const charge = await deliverApple(stack, pki, appleCharge(transactionId, token));
    expect(await stack.finishedInboxRow('apple', charge)).toMatchObject({ outcome_code: 'credited' });
    expect(await debit(stack, userId, 60, 'spend')).toBe(201);
    const revocationDate = Date.now();
    const refund = await deliverApple(stack, pki, {
      type: 'REFUND',
      transaction: { transactionId, appAccountToken: token, revocationDate, revocationReason: 0 },
    });
    expect(await stack.finishedInboxRow('apple', refund)).toMatchObject({ outcome_code: 'partially_refunded' });
    // Filed under the user the worker found (ingest stored none: Apple names no Tally user).
    for (const uuid of [charge, refund]) expect((await stack.inboxRow('apple', uuid)).user_id).toBe(userId);
    // A notification whose token Tally never gave is filed under nobody.
    const stranger = await deliverApple(stack, pki, appleCharge(`7001${Date.now()}`, randomUUID()));
    expect(await stack.finishedInboxRow('apple', stranger)).toMatchObject({ user_id: null });

    const view = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    const events = (view.events.items ?? view.events) as { provider: string; type: string; providerEventId: string }[];
    expect(
      events
        .filter((event) => event.provider === 'apple')
        .map((event) => [event.type, event.providerEventId])
        .sort(),
    ).toEqual([
      ['ONE_TIME_CHARGE', charge],
      ['REFUND', refund],
    ]);
    expect(view.payments).toEqual([
      expect.objectContaining({
        provider: 'apple',
        providerPaymentId: transactionId,
        kind: 'token_pack',
        productId: 'tokens_100',
        status: 'refunded',
        tokensGranted: 100,
        tokensRefunded: 40,
        refundShortfall: 60,
      }),
    ]);
    const refundReference = `apple:refund:${transactionId}:${revocationDate}`;
    expect(
      (view.ledger.entries as { reference: string; amount: number }[]).map((e) => [e.reference, e.amount]),
    ).toEqual(
      expect.arrayContaining([
        [`apple:transaction:${transactionId}`, 100],
        [refundReference, -40],
      ]),
    );
    expect(view.refunds).toEqual([
      expect.objectContaining({
        provider: 'apple',
        providerRefundId: transactionId,
        packId: 'tokens_100',
        creditReference: `apple:transaction:${transactionId}`,
        tokensCredited: 100,
        tokensTaken: 40,
        shortfall: 60,
      }),
    ]);
    expect(view.wallet).toMatchObject({ balance: 0, debt: 60 });

    const html = await stack.consoleUserPage(userId);
    expect(html).toContain(`apple:transaction:${transactionId}`);
    expect(html).toContain(refundReference);
    expect(html).toContain('REFUND');
    expect(html).toContain(charge);
  });
});
