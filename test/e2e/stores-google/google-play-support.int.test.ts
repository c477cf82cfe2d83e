import { debit } from '../../support/auto-topup';
import { oneTimeProduct, voidedPurchase } from '../../support/fakes/google-play-keys';
import { fakePackageName, googlePlayActions, suiteStackWithFakeGooglePlay } from '../../support/google-play';
import { readJson } from '../../support/stack';

/**
 * Support sees Google Play purchases as it sees the others (docs/stores-google-play.md,
 * Operations): the user's events (filed under the user the worker found, since Google names
 * none), the credit and the void's take-back in the ledger, the void as a token refund with its
 * shortfall, and the debt, in `GET /admin/users/{userId}` and on the console's user page.
 */
describe('Google Play purchases in the support view and the console', () => {
  const { stack, fake } = suiteStackWithFakeGooglePlay({ worker: { roles: ['inbox', 'relay'] } });
  const play = googlePlayActions(stack, fake);

  it('shows the purchase, its void, the refund and the debt', async () => {
    const userId = `gsupport-${Date.now().toString(36)}`;
    const accountId = await play.accountOf(userId);
    const token = `tok-support-${Date.now()}`;
    const orderId = `GPA.7001-${Date.now()}`;
    play.setPurchase(token, { orderId, accountId });
    const purchased = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    expect(await debit(stack, userId, 60, 'spend')).toBe(201);
    const voided = await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    expect(voided.outcome_code).toBe('partially_refunded');
    // Filed under the user the worker found (ingest stored none).
    expect((await stack.inboxRow('google_play', purchased.provider_event_id)).user_id).toBe(userId);

    const view = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    const events = view.events.items ?? view.events;
    expect(
      (events as { provider: string; type: string }[])
        .filter((event) => event.provider === 'google_play')
        .map((event) => event.type)
        .sort(),
    ).toEqual(['ONE_TIME_PRODUCT_PURCHASED', 'VOIDED_PURCHASE']);
    const references = (view.ledger.entries as { reference: string; amount: number }[]).map((entry) => [
      entry.reference,
      entry.amount,
    ]);
    expect(references).toEqual(
      expect.arrayContaining([
        [`google:order:${orderId}`, 100],
        [`google:voided:${orderId}`, -40],
      ]),
    );
    expect(view.refunds).toEqual([
      expect.objectContaining({
        provider: 'google_play',
        providerRefundId: orderId,
        packId: 'tokens_100',
        creditReference: `google:order:${orderId}`,
        tokensCredited: 100,
        tokensTaken: 40,
        shortfall: 60,
      }),
    ]);
    expect(view.wallet).toMatchObject({ balance: 0, debt: 60 });

    const html = await stack.consoleUserPage(userId);
    expect(html).toContain(`google:order:${orderId}`);
    expect(html).toContain(`google:voided:${orderId}`);
    expect(html).toContain('google_play');
  });
});
