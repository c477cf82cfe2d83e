import { debit } from '../../support/auto-topup';
import { oneTimeProduct, voidedPurchase } from '../../support/fakes/google-play-keys';
import { fakePackageName, googlePlayActions, suiteStackWithFakeGooglePlay } from '../../support/google-play';
import { eventually } from '../../support/stack';
import { quickRetryLater, verifyLedgerAfterEach } from '../../support/suite';

/**
 * Voided Google Play purchases (docs/stores-google-play.md): a refund, chargeback or revocation
 * takes the pack back from its lot, never below zero (what was spent is debt, source
 * `google_voided`), once per order whether the notification, the daily pass over the Voided
 * Purchases API, or both see it; a void Tally saw before the credit keeps the purchase uncredited.
 */
describe('Google Play voided purchases', () => {
  const { stack, fake } = suiteStackWithFakeGooglePlay({
    worker: {
      roles: ['inbox', 'relay', 'google-play-consume'],
      retryLater: quickRetryLater,
      googlePlayConsume: { intervalMs: 50, leaseMs: 3_000, backoff: { baseDelayMs: 100, maxDelayMs: 300 } },
    },
  });
  verifyLedgerAfterEach(stack);
  const play = googlePlayActions(stack, fake);
  let voidedPass: () => Promise<void>;
  beforeAll(() => {
    // The daily pass, run by hand (its first run at start finds nothing).
    voidedPass = stack.startLoop('google-play-voided', { googlePlayVoidedPass: { intervalMs: 3_600_000 } });
  });
  let seq = 0;
  const newUser = () => `gvoid-${++seq}-${Date.now().toString(36)}`;
  const newOrder = () => `GPA.5510-${Date.now().toString().slice(-6)}-${++seq}`;

  /** A user who bought tokens_100 on Play (credited and consumed): their order and token. */
  async function buyer() {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId });
    const row = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    expect(row.outcome_code).toBe('credited');
    return { userId, accountId, token, orderId };
  }
  const refundsOf = (orderId: string) =>
    stack.db
      .selectFrom('token_refunds')
      .select(['provider', 'user_id', 'tokens_credited', 'tokens_taken', 'shortfall'])
      .where('provider', '=', 'google_play')
      .where('provider_refund_id', '=', orderId)
      .execute();
  const shortfallsOf = (userId: string) =>
    stack.db
      .selectFrom('take_back_shortfalls')
      .select(['source', 'shortfall', 'take_back_reference'])
      .where('user_id', '=', userId)
      .execute();
  const listVoided = (token: string, orderId: string) =>
    fake.voided.push({
      purchaseToken: token,
      orderId,
      voidedTimeMillis: String(Date.now()),
      voidedSource: 0,
      voidedReason: 1,
    });

  it('takes a voided pack back from its lot; what was spent becomes debt', async () => {
    const { userId, token, orderId } = await buyer();
    expect(await debit(stack, userId, 70, 'spend')).toBe(201);
    const row = await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'partially_refunded' });
    expect(await play.balanceOf(userId)).toMatchObject({ balance: 0, debt: 70 });
    expect(await refundsOf(orderId)).toEqual([
      { provider: 'google_play', user_id: userId, tokens_credited: 100, tokens_taken: 30, shortfall: 70 },
    ]);
    expect(await shortfallsOf(userId)).toEqual([
      { source: 'google_voided', shortfall: 70, take_back_reference: `google:voided:${orderId}` },
    ]);
    // The next pack bought settles the debt first.
    const next = `tok-${newOrder()}`;
    play.setPurchase(next, { orderId: newOrder(), accountId: await play.accountOf(userId) });
    await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', next));
    expect(await play.balanceOf(userId)).toMatchObject({ balance: 30, debt: 0 });
  });

  it('takes it back once: the notification twice, then the daily pass listing it', async () => {
    const { userId, token, orderId } = await buyer();
    const first = await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    expect(first).toMatchObject({ status: 'processed', outcome_code: 'refunded' });
    const second = await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    expect(second).toMatchObject({ status: 'processed', outcome_code: 'already_refunded' });
    listVoided(token, orderId);
    await voidedPass();
    expect(await play.balanceOf(userId)).toMatchObject({ balance: 0, debt: 0 });
    expect(await refundsOf(orderId)).toHaveLength(1);
    const takeBacks = await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'token_pack_refund')
      .execute();
    expect(takeBacks).toEqual([{ reference: `google:voided:${orderId}`, amount: -100 }]);
  });

  it('finds a voided purchase whose notification never came in the daily pass, and takes it back', async () => {
    const { userId, token, orderId } = await buyer();
    expect(await debit(stack, userId, 40, 'spend')).toBe(201);
    // Another app's and an unknown order's voids are listed too (pages of two).
    fake.voidedPageSize = 2;
    listVoided('tok-never-credited', newOrder());
    listVoided(token, orderId);
    listVoided('tok-other', newOrder());
    await voidedPass();
    expect(await play.balanceOf(userId)).toMatchObject({ balance: 0, debt: 40 });
    expect(await refundsOf(orderId)).toEqual([
      { provider: 'google_play', user_id: userId, tokens_credited: 100, tokens_taken: 60, shortfall: 40 },
    ]);
    const voided = await stack.db
      .selectFrom('google_play_voided_purchases')
      .select(['seen_by', 'purchase_token'])
      .where('order_id', '=', orderId)
      .executeTakeFirstOrThrow();
    expect(voided).toEqual({ seen_by: 'voided_purchases_api', purchase_token: token });
    // A notification arriving late takes nothing more.
    const late = await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    expect(late.outcome_code).toBe('already_refunded');
    expect(await play.balanceOf(userId)).toMatchObject({ balance: 0, debt: 40 });
    fake.voidedPageSize = 100;
  });

  it('never credits a purchase Tally saw voided first', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    const voided = await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    expect(voided).toMatchObject({ status: 'ignored', outcome_code: 'nothing_refunded' });
    // Google still answers purchased (its read lags the void): the recorded void decides.
    play.setPurchase(token, { orderId, accountId });
    const late = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    expect(late).toMatchObject({ status: 'ignored', outcome_code: 'purchase_voided' });
    expect(await play.balanceOf(userId)).toMatchObject({ balance: 0, debt: 0 });
  });

  it('stops consuming a purchase voided before its consume', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId });
    // Google is down for consumes: the void arrives first.
    fake.failNext('products.consume', 1_000, 503);
    await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    await play.deliver(voidedPurchase(fakePackageName, token, orderId));
    const row = await eventually('the consume row ended', async () => {
      const purchase = await stack.db
        .selectFrom('google_play_purchases')
        .select(['consume_status'])
        .where('order_id', '=', orderId)
        .executeTakeFirst();
      return purchase?.consume_status === 'voided' ? purchase : undefined;
    });
    expect(row.consume_status).toBe('voided');
    const calls = fake.count('products.consume');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(fake.count('products.consume')).toBe(calls);
    fake.clearFailures();
  });
});
