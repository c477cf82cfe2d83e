import { findWallet } from '@tally/billing-core';
import { processOne } from '../../support/engine';
import { revenueCatTokenPurchase } from '../../support/events';
import { FakeClock } from '../../support/fakes/fake-clock';
import { ledgerOf } from '../../support/ledger';
import { suiteStackWithFakeRevenueCat } from '../../support/suite';

/** A NON_RENEWING_PURCHASE of tokens.100 naming one store transaction. */
function purchase(id: string, userId: string, transactionId: string) {
  const body = JSON.parse(revenueCatTokenPurchase({ id, userId }));
  body.event.transaction_id = transactionId;
  return JSON.stringify(body);
}

/**
 * Token packs are confirmed against RevenueCat's REST read before they credit anything
 * (REVENUECAT_VERIFY_PURCHASES, on by default): a body forged with a leaked Authorization value
 * mints nothing. Events are stored through the real ingest (webhook authorization checked) and
 * processed by the engine with a clock the test sets, against the fake RevenueCat over HTTP.
 */
describe('RevenueCat token pack verification', () => {
  const { stack, fake } = suiteStackWithFakeRevenueCat({ verifyRevenueCatPurchases: true });
  const clock = new FakeClock();
  afterEach(() => clock.reset());

  async function store(body: string): Promise<number> {
    const response = await stack.postRevenueCat(body);
    expect(response.status).toBe(200);
    const eventId = JSON.parse(body).event.id as string;
    const [row] = await stack.inboxRows('revenuecat', eventId);
    if (!row) throw new Error(`event ${eventId} was not stored`);
    return row.id;
  }
  const run = (inboxEventId: number) => processOne(stack.processorDeps({ clock }), inboxEventId);
  const ledger = (userId: string) => ledgerOf(stack.db, userId, ['reference', 'amount', 'balance_after', 'reason']);
  const rowOf = (inboxEventId: number) =>
    stack.db
      .selectFrom('inbox_events')
      .select(['status', 'outcome_code', 'last_error', 'received_at'])
      .where('id', '=', inboxEventId)
      .executeTakeFirstOrThrow();

  it('credits nothing for a forged pack RevenueCat never lists, retries for an hour, then parks it purchase_not_found', async () => {
    fake.setSubscriber('forge-victim', {});
    const id = await store(purchase('rc-forged-1', 'forge-victim', 'tx-forged-1'));

    const first = await run(id);
    expect(first.kind).toBe('deferred');
    const { received_at: receivedAt } = await rowOf(id);
    clock.set(new Date(receivedAt.getTime() + 59 * 60_000));
    expect((await run(id)).kind).toBe('deferred');
    clock.set(new Date(receivedAt.getTime() + 60 * 60_000));
    const parked = await run(id);
    expect(parked).toMatchObject({ kind: 'failed', parked: true, code: 'purchase_not_found' });

    expect(await rowOf(id)).toMatchObject({ status: 'failed', outcome_code: 'purchase_not_found' });
    expect(await ledger('forge-victim')).toEqual([]);
    expect(await findWallet(stack.db, 'forge-victim')).toEqual({ userId: 'forge-victim', balance: 0 });
    expect(fake.callsFor('forge-victim')).toBe(3);
  });

  it('credits a genuine pack once: the read lists its store transaction; a redelivery and a replay add nothing', async () => {
    fake.addNonSubscription('genuine-user', 'tokens.100', 'tx-genuine-1');
    const body = purchase('rc-genuine-1', 'genuine-user', 'tx-genuine-1');
    const id = await store(body);
    expect(await run(id)).toMatchObject({ kind: 'processed', code: 'credited' });
    expect(((await (await stack.postRevenueCat(body)).json()) as { status: string }).status).toBe('duplicate');
    const replay = await stack.apiRequest(`/admin/events/${id}/replay`, { method: 'POST' });
    expect(replay.status).toBe(200);
    expect(await run(id)).toMatchObject({ kind: 'processed', code: 'already_credited' });

    expect(await ledger('genuine-user')).toEqual([
      { reference: 'revenuecat:event:rc-genuine-1', amount: 100, balance_after: 100, reason: 'token_pack_purchase' },
    ]);
    expect(
      await stack.db
        .selectFrom('revenuecat_pack_transactions')
        .select(['store_transaction_id', 'user_id', 'product_id', 'ledger_reference', 'inbox_event_id', 'verified'])
        .where('user_id', '=', 'genuine-user')
        .execute(),
    ).toEqual([
      {
        store_transaction_id: 'tx-genuine-1',
        user_id: 'genuine-user',
        product_id: 'tokens.100',
        ledger_reference: 'revenuecat:event:rc-genuine-1',
        inbox_event_id: id,
        verified: true,
      },
    ]);
  });

  it('credits a genuine pack once RevenueCat lists it on the third read, having waited through the first two', async () => {
    fake.setSubscriber('lagging-user', {});
    const id = await store(purchase('rc-lag-1', 'lagging-user', 'tx-lag-1'));
    expect(await run(id)).toMatchObject({ kind: 'deferred' });
    expect(await run(id)).toMatchObject({ kind: 'deferred' });
    expect(await ledger('lagging-user')).toEqual([]);
    expect(await rowOf(id)).toMatchObject({ status: 'received', outcome_code: 'waiting' });

    fake.addNonSubscription('lagging-user', 'tokens.100', 'tx-lag-1');
    expect(await run(id)).toMatchObject({ kind: 'processed', code: 'credited' });
    expect(await run(id)).toEqual({ kind: 'skipped', status: 'processed' });
    expect(fake.callsFor('lagging-user')).toBe(3);
    expect(await ledger('lagging-user')).toEqual([
      { reference: 'revenuecat:event:rc-lag-1', amount: 100, balance_after: 100, reason: 'token_pack_purchase' },
    ]);
  });

  it('credits nothing for a forged event that reuses a genuine, already credited store transaction under a new event id', async () => {
    fake.addNonSubscription('reuse-user', 'tokens.100', 'tx-reuse-1');
    const genuine = await store(purchase('rc-reuse-genuine', 'reuse-user', 'tx-reuse-1'));
    expect(await run(genuine)).toMatchObject({ kind: 'processed', code: 'credited' });
    const forged = await store(purchase('rc-reuse-forged', 'reuse-user', 'tx-reuse-1'));
    expect(await run(forged)).toMatchObject({ kind: 'ignored', code: 'transaction_already_credited' });
    expect(await ledger('reuse-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-reuse-genuine',
        amount: 100,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
    ]);
  });

  it('parks at once a pack of a customer RevenueCat did not know (its read created it, so it has no purchase)', async () => {
    const id = await store(purchase('rc-unknown-1', 'nobody-at-revenuecat', 'tx-unknown-1'));
    expect(await run(id)).toMatchObject({ kind: 'failed', parked: true, code: 'purchase_not_found' });
    expect(fake.unknownRequested).toContain('nobody-at-revenuecat');
    expect(await ledger('nobody-at-revenuecat')).toEqual([]);
  });

  it('does not credit a pack listed under another product or another transaction', async () => {
    fake.addNonSubscription('mismatch-user', 'tokens.500', 'tx-mismatch-1');
    fake.addNonSubscription('mismatch-user', 'tokens.100', 'tx-mismatch-other');
    const id = await store(purchase('rc-mismatch-1', 'mismatch-user', 'tx-mismatch-1'));
    expect(await run(id)).toMatchObject({ kind: 'deferred' });
    expect(await ledger('mismatch-user')).toEqual([]);
  });
});
