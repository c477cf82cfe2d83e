import { oneTimeProduct } from '../../support/fakes/google-play-keys';
import { fakePackageName, googlePlayActions, suiteStackWithFakeGooglePlay } from '../../support/google-play';
import { eventually, readJson } from '../../support/stack';
import { quickRetryLater, verifyLedgerAfterEach } from '../../support/suite';

/**
 * Google Play one-time purchases (docs/stores-google-play.md) over HTTP against real Postgres and
 * Redis, Google faked as a local server: pushes through ingest, the worker re-reads each purchase
 * with purchases.products.get and credits only a purchased one, once per order, then its
 * google-play-consume loop consumes it after the credit committed, retried until Google says so.
 */
describe('Google Play purchases', () => {
  const { stack, fake } = suiteStackWithFakeGooglePlay({
    worker: {
      roles: ['inbox', 'relay', 'google-play-consume'],
      retryLater: quickRetryLater,
      googlePlayConsume: { intervalMs: 50, leaseMs: 3_000, backoff: { baseDelayMs: 100, maxDelayMs: 300 } },
    },
  });
  verifyLedgerAfterEach(stack);
  const play = googlePlayActions(stack, fake);
  let seq = 0;
  const newUser = () => `gplay-${++seq}-${Date.now().toString(36)}`;
  const newOrder = () => `GPA.3372-${Date.now().toString().slice(-6)}-${++seq}`;
  const purchaseRow = (orderId: string) =>
    stack.db.selectFrom('google_play_purchases').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  const consumedRow = (orderId: string) =>
    eventually(`order ${orderId} consumed`, async () => {
      const row = await purchaseRow(orderId);
      return row?.consume_status === 'consumed' ? row : undefined;
    });
  const creditsOf = (userId: string) =>
    stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'reason'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();

  it('credits a purchased pack to the user its account id names, and consumes it after the credit committed', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId });
    let creditSeenAtConsume: unknown[] | undefined;
    fake.onConsume = async (consumed) => {
      if (consumed === token) creditSeenAtConsume = await creditsOf(userId);
    };
    const row = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(await creditsOf(userId)).toEqual([
      { reference: `google:order:${orderId}`, amount: 100, reason: 'token_pack_purchase' },
    ]);
    const lot = await stack.db
      .selectFrom('credit_lots')
      .select(['category', 'remaining', 'expires_at'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(lot).toEqual({ category: 'purchased', remaining: 100, expires_at: null });
    const consumed = await consumedRow(orderId);
    expect(consumed).toMatchObject({ user_id: userId, pack_id: 'tokens_100', tokens: 100, environment: 'production' });
    expect(consumed.consumed_at).toBeInstanceOf(Date);
    // The consume came from the durable row after the credit's transaction committed.
    expect(creditSeenAtConsume).toEqual([
      { reference: `google:order:${orderId}`, amount: 100, reason: 'token_pack_purchase' },
    ]);
    expect(fake.consumed.filter((consumedToken) => consumedToken === token)).toHaveLength(1);
  });

  it('credits once under redelivery and under two notifications of one order', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId });
    const messageId = play.newMessageId();
    const first = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token), messageId);
    expect(first.outcome_code).toBe('credited');
    // Pub/Sub delivers at least once: the same message again is a duplicate, stored once.
    const again = await play.push(oneTimeProduct(fakePackageName, 'tokens_100', token), { messageId });
    expect(await readJson(again)).toEqual({ status: 'duplicate', eventId: messageId });
    // Another notification of the same purchase (and two more at once) credit nothing.
    const others = await Promise.all(
      [0, 1, 2].map(() => play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token))),
    );
    for (const other of others) {
      expect(other).toMatchObject({ status: 'ignored', outcome_code: 'transaction_already_credited' });
    }
    expect((await play.balanceOf(userId)).balance).toBe(100);
    await consumedRow(orderId);
    expect(fake.consumed.filter((consumedToken) => consumedToken === token)).toHaveLength(1);
  });

  it('waits while the purchase is pending, and credits it once Google says it is purchased', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId, purchaseState: 2 });
    const reads = fake.count('products.get');
    const messageId = play.newMessageId();
    expect((await play.push(oneTimeProduct(fakePackageName, 'tokens_100', token), { messageId })).status).toBe(200);
    // Read again and again while pending; nothing credited, nothing consumed.
    await eventually('the pending purchase read three times', async () => fake.count('products.get') >= reads + 3);
    // Unfinished: waiting for its next read, or in the middle of one.
    expect(['received', 'processing']).toContain((await stack.inboxRow('google_play', messageId))?.status);
    expect((await play.balanceOf(userId)).balance).toBe(0);
    expect(await purchaseRow(orderId)).toBeUndefined();
    // The buyer pays at the shop: Google now says purchased.
    play.setPurchase(token, { orderId, accountId, purchaseState: 0 });
    const row = await stack.finishedInboxRow('google_play', messageId);
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect((await play.balanceOf(userId)).balance).toBe(100);
    await consumedRow(orderId);
  });

  it('retries a consume that failed until Google consumes it, the credit standing all along', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId });
    fake.failNext('products.consume', 3, 503);
    const row = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    expect(row.outcome_code).toBe('credited');
    expect((await play.balanceOf(userId)).balance).toBe(100);
    const failing = await eventually('a failed consume recorded', async () => {
      const purchase = await purchaseRow(orderId);
      return purchase?.consume_last_error ? purchase : undefined;
    });
    expect(failing).toMatchObject({ consume_status: 'pending' });
    expect(failing.consume_last_error).toContain('503');
    const consumed = await consumedRow(orderId);
    expect(consumed.consume_tries).toBe(4);
    expect((await play.balanceOf(userId)).balance).toBe(100);
  });

  it('ends a consume Google refuses because the purchase is consumed already', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    // Consumed on the device already (the app's own consume): Google refuses a second one.
    play.setPurchase(token, { orderId, accountId, consumptionState: 1 });
    await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    const consumed = await consumedRow(orderId);
    expect(consumed.consume_tries).toBe(1);
    expect(fake.consumed).not.toContain(token);
    expect((await play.balanceOf(userId)).balance).toBe(100);
  });

  it('credits nothing for a canceled purchase, an account id Tally never gave, or a product not in the catalog', async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const canceled = `tok-${newOrder()}`;
    play.setPurchase(canceled, { orderId: newOrder(), accountId, purchaseState: 1 });
    expect(await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', canceled))).toMatchObject({
      status: 'ignored',
      outcome_code: 'purchase_canceled',
    });
    const stranger = `tok-${newOrder()}`;
    play.setPurchase(stranger, { orderId: newOrder(), accountId: 'not-an-id-tally-gave' });
    expect(await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', stranger))).toMatchObject({
      status: 'ignored',
      outcome_code: 'no_user',
    });
    const reads = fake.count('products.get');
    expect(await play.deliver(oneTimeProduct(fakePackageName, 'gems_5', `tok-${newOrder()}`))).toMatchObject({
      status: 'ignored',
      outcome_code: 'not_in_catalog',
    });
    // Not a pack: nothing to read.
    expect(fake.count('products.get')).toBe(reads);
    const pendingCanceled = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', canceled, 2));
    expect(pendingCanceled).toMatchObject({ status: 'ignored', outcome_code: 'purchase_canceled' });
    expect((await play.balanceOf(userId)).balance).toBe(0);
    expect(
      await stack.db.selectFrom('google_play_purchases').select('order_id').where('user_id', '=', userId).execute(),
    ).toEqual([]);
  });

  it("reads a purchase again after Google failed, and records a licence tester's purchase as sandbox", async () => {
    const userId = newUser();
    const accountId = await play.accountOf(userId);
    const token = `tok-${newOrder()}`;
    const orderId = newOrder();
    play.setPurchase(token, { orderId, accountId, purchaseType: 0 });
    fake.failNext('products.get', 2, 500);
    const row = await play.deliver(oneTimeProduct(fakePackageName, 'tokens_100', token));
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(row.attempts).toBeGreaterThanOrEqual(3);
    expect(await purchaseRow(orderId)).toMatchObject({ environment: 'sandbox' });
    await consumedRow(orderId);
  });
});
