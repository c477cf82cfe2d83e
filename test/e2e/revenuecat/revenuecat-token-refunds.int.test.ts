import { findWallet, inboxJobId, productionOnlyPolicy } from '@tally/billing-core';
import { sql } from 'kysely';
import { revenueCatTokenPurchase, revenueCatTokenPackRefund as tokenPackRefund } from '../../support/events';
import { ledgerOf } from '../../support/ledger';
import { eventually, TestStack } from '../../support/stack';
import { suiteStack } from '../../support/suite';

function purchase(id: string, userId: string, transactionId: string) {
  const body = JSON.parse(revenueCatTokenPurchase({ id, userId }));
  body.event.transaction_id = transactionId;
  return JSON.stringify(body);
}

describe('RevenueCat token pack refunds', () => {
  const stack = suiteStack({ worker: { retryLater: { baseDelayMs: 100, maxDelayMs: 200, maxWaitMs: 60_000 } } });

  const finished = (providerEventId: string) => stack.finishedInboxRow('revenuecat', providerEventId);
  const refundsOf = (userId: string) =>
    stack.db
      .selectFrom('token_refunds')
      .select([
        'provider',
        'provider_refund_id',
        'pack_id',
        'credit_reference',
        'tokens_credited',
        'tokens_taken',
        'shortfall',
      ])
      .where('user_id', '=', userId)
      .execute();

  it('takes back the tokens of a partly spent pack down to zero, not below, once, and the ledger explains it', async () => {
    await stack.postRevenueCat(purchase('rc-refund-buy', 'refund-user', 'tx-refund-1'));
    await finished('rc-refund-buy');
    // The user spends 60 of the 100 tokens (a debit through the ledger, as AI Studio would).
    await stack.postPlainEntry({ userId: 'refund-user', reference: 'test:spend:1', amount: -60, reason: 'test_spend' });

    const refund = tokenPackRefund({ id: 'rc-refund-1', userId: 'refund-user', transactionId: 'tx-refund-1' });
    await stack.postRevenueCat(refund);
    expect(await finished('rc-refund-1')).toMatchObject({
      status: 'processed',
      outcome_code: 'partially_refunded',
      outcome_detail: 'took back 40 of 100 tokens (tokens_100); shortfall 60: already spent',
    });
    // A redelivery with a new event id for the same transaction, and a replay: nothing more is taken.
    await stack.postRevenueCat(
      tokenPackRefund({ id: 'rc-refund-1b', userId: 'refund-user', transactionId: 'tx-refund-1' }),
    );
    expect(await finished('rc-refund-1b')).toMatchObject({ status: 'processed', outcome_code: 'already_refunded' });

    expect(await findWallet(stack.db, 'refund-user')).toEqual({ userId: 'refund-user', balance: 0 });
    expect(await ledgerOf(stack.db, 'refund-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-refund-buy',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
      { reference: 'test:spend:1', amount: -60, balance_before: 100, balance_after: 40, reason: 'test_spend' },
      {
        reference: 'revenuecat:refund:tx-refund-1',
        amount: -40,
        balance_before: 40,
        balance_after: 0,
        reason: 'token_pack_refund',
      },
    ]);
    expect(await refundsOf('refund-user')).toEqual([
      {
        provider: 'revenuecat',
        provider_refund_id: 'tx-refund-1',
        pack_id: 'tokens_100',
        credit_reference: 'revenuecat:event:rc-refund-buy',
        tokens_credited: 100,
        tokens_taken: 40,
        shortfall: 60,
      },
    ]);
  });

  it('takes no token an active hold reserves: the rest is a shortfall the hold settles when released', async () => {
    await stack.postRevenueCat(purchase('rc-held-buy', 'held-user', 'tx-held'));
    await finished('rc-held-buy');
    const placed = await stack.apiRequest('/v1/users/held-user/holds', {
      method: 'POST',
      body: { amount: 70, reference: 'render-1' },
    });
    expect(placed.status).toBe(201);
    const holdId = ((await placed.json()) as { id: string }).id;

    await stack.postRevenueCat(
      tokenPackRefund({ id: 'rc-held-refund', userId: 'held-user', transactionId: 'tx-held' }),
    );
    expect(await finished('rc-held-refund')).toMatchObject({
      status: 'processed',
      outcome_code: 'partially_refunded',
    });
    // Only the 30 not held were taken; the 70 the hold reserves stay until it ends.
    expect(await refundsOf('held-user')).toEqual([
      expect.objectContaining({ tokens_credited: 100, tokens_taken: 30, shortfall: 70 }),
    ]);
    expect(await findWallet(stack.db, 'held-user')).toEqual({ userId: 'held-user', balance: 70 });

    const released = await stack.apiRequest(`/v1/users/held-user/holds/${holdId}/release`, {
      method: 'POST',
      body: {},
    });
    expect(released.status).toBe(200);
    expect(
      (await ledgerOf(stack.db, 'held-user')).map((entry) => [entry.reference, entry.amount, entry.balance_after]),
    ).toEqual([
      ['revenuecat:event:rc-held-buy', 100, 100],
      ['revenuecat:refund:tx-held', -30, 70],
      [`hold:${holdId}:release:recovered`, -70, 0],
    ]);
    expect(await refundsOf('held-user')).toEqual([
      expect.objectContaining({ tokens_credited: 100, tokens_taken: 100, shortfall: 0 }),
    ]);
  });

  it('waits for a purchase delivered after its refund, then takes the whole pack back', async () => {
    await stack.postRevenueCat(
      tokenPackRefund({ id: 'rc-early-refund', userId: 'early-user', transactionId: 'tx-early' }),
    );
    await eventually('the refund to wait for its purchase', async () => {
      const row = await stack.db
        .selectFrom('inbox_events')
        .select('outcome_code')
        .where('provider_event_id', '=', 'rc-early-refund')
        .executeTakeFirst();
      return row?.outcome_code === 'waiting';
    });
    await stack.postRevenueCat(purchase('rc-late-buy', 'early-user', 'tx-early'));
    expect(await finished('rc-early-refund')).toMatchObject({ status: 'processed', outcome_code: 'refunded' });
    expect(await findWallet(stack.db, 'early-user')).toEqual({ userId: 'early-user', balance: 0 });
    expect((await ledgerOf(stack.db, 'early-user')).map((entry) => [entry.reference, entry.amount])).toEqual([
      ['revenuecat:event:rc-late-buy', 100],
      ['revenuecat:refund:tx-early', -100],
    ]);
  });

  it("finds the purchase even when one of the user's stored bodies is nested too deeply for Postgres jsonb", async () => {
    const deep = JSON.parse(purchase('rc-deep-buy', 'deep-user', 'tx-deep-other'));
    const nested = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const deepBody = JSON.stringify(deep).replace(/}$/, `,"extra":${nested}}`);
    // Stored as ingest would store it (this test stack's ingest limits bodies to 64 KiB; production allows 1 MiB).
    const { id } = await stack.db
      .insertInto('inbox_events')
      .values({
        provider: 'revenuecat',
        provider_event_id: 'rc-deep-buy',
        type: 'NON_RENEWING_PURCHASE',
        livemode: true,
        environment: 'production',
        user_id: 'deep-user',
        raw_body: deepBody,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await stack.queue.add('process', { inboxEventId: id }, { jobId: inboxJobId(id) });
    expect(await finished('rc-deep-buy')).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    await stack.postRevenueCat(purchase('rc-deep-buy-2', 'deep-user', 'tx-deep'));
    await finished('rc-deep-buy-2');
    await stack.postRevenueCat(
      tokenPackRefund({ id: 'rc-deep-refund', userId: 'deep-user', transactionId: 'tx-deep' }),
    );
    expect(await finished('rc-deep-refund')).toMatchObject({ status: 'processed', outcome_code: 'refunded' });
    expect(await findWallet(stack.db, 'deep-user')).toEqual({ userId: 'deep-user', balance: 100 });
    // Postgres itself cannot read that body as jsonb: the refund must not depend on it.
    await expect(
      sql`SELECT raw_body::jsonb FROM inbox_events WHERE provider_event_id = 'rc-deep-buy'`.execute(stack.db),
    ).rejects.toThrow('stack depth');
  });

  it('ignores a sandbox refund under a production-only policy', async () => {
    const production = await TestStack.start({ policy: productionOnlyPolicy });
    try {
      production.startWorker();
      await production.postRevenueCat(
        tokenPackRefund({
          id: 'rc-sandbox-refund',
          userId: 'sandbox-user',
          transactionId: 'tx-s',
          environment: 'SANDBOX',
        }),
      );
      const row = await eventually('the sandbox refund to be ignored', async () => {
        const found = await production.db
          .selectFrom('inbox_events')
          .select(['status', 'outcome_code'])
          .where('provider_event_id', '=', 'rc-sandbox-refund')
          .executeTakeFirst();
        return found?.status === 'ignored' ? found : undefined;
      });
      expect(row).toEqual({ status: 'ignored', outcome_code: 'other_environment' });
    } finally {
      await production.stop();
    }
  });
});
