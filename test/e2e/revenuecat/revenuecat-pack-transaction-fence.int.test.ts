import { findWallet, lockUsers, verifyLedger } from '@tally/billing-core';
import { sql } from 'kysely';
import { revenueCatTokenPurchase } from '../../support/events';
import { ledgerColumns, ledgerOf } from '../../support/ledger';
import { eventually } from '../../support/stack';
import { suiteStack } from '../../support/suite';

const columns = [...ledgerColumns, 'inbox_event_id'] as const;

/**
 * One credit per RevenueCat store transaction (`transaction_id`), whatever event ids name it and
 * whatever REVENUECAT_VERIFY_PURCHASES says: revenuecat_pack_transactions (primary key on the store
 * transaction) is written in the crediting transaction. This stack runs with verification off (the
 * demo configuration, where nothing else would stop it); docs/revenuecat.md. Events go through the
 * real ingest and the real workers.
 */
describe('RevenueCat token packs: one credit per store transaction, with verification off', () => {
  const stack = suiteStack({ verifyRevenueCatPurchases: false });
  afterEach(() => stack.stopWorkers());

  const deliver = async (body: string) => {
    expect((await stack.postRevenueCat(body)).status).toBe(200);
    return JSON.parse(body).event.id as string;
  };
  const finished = (eventId: string) => stack.finishedInboxRow('revenuecat', eventId);
  const claimsOf = (transactionId: string) =>
    stack.db
      .selectFrom('revenuecat_pack_transactions')
      .select(['store_transaction_id', 'user_id', 'product_id', 'ledger_reference', 'inbox_event_id', 'verified'])
      .where('store_transaction_id', '=', transactionId)
      .execute();

  it('credits a store transaction delivered under a second event id once: the second is ignored as transaction_already_credited', async () => {
    stack.startWorker();
    const user = 'fence-user';
    const first = await finished(
      await deliver(
        revenueCatTokenPurchase({
          id: 'rc-fence-1',
          userId: user,
          productId: '2100_tokens',
          transactionId: 'tx-fence-1',
        }),
      ),
    );
    const second = await finished(
      await deliver(
        revenueCatTokenPurchase({
          id: 'rc-fence-2',
          userId: user,
          productId: '2100_tokens',
          transactionId: 'tx-fence-1',
        }),
      ),
    );

    expect([first, second].map((row) => [row.status, row.outcome_code, row.outcome_detail])).toEqual([
      ['processed', 'credited', 'credited 2100 tokens (tokens_2100)'],
      [
        'ignored',
        'transaction_already_credited',
        `store transaction tx-fence-1 was credited by inbox event ${first.id} (revenuecat:event:rc-fence-1)`,
      ],
    ]);
    expect(await ledgerOf(stack.db, user, columns)).toEqual([
      {
        reference: 'revenuecat:event:rc-fence-1',
        amount: 2100,
        balance_before: 0,
        balance_after: 2100,
        reason: 'token_pack_purchase',
        inbox_event_id: first.id,
      },
    ]);
    expect(await findWallet(stack.db, user)).toEqual({ userId: user, balance: 2100 });
    expect(await claimsOf('tx-fence-1')).toEqual([
      {
        store_transaction_id: 'tx-fence-1',
        user_id: user,
        product_id: '2100_tokens',
        ledger_reference: 'revenuecat:event:rc-fence-1',
        inbox_event_id: first.id,
        verified: false,
      },
    ]);
  });

  it('credits a store transaction once when two event ids naming it under two different app user ids are processed at once by two workers', async () => {
    const users = ['fence-race-a', '$RCAnonymousID:00000000000fe1ce'];
    // Hold both users' engine locks: each worker's transaction waits on its own user's lock, so
    // neither can start before both have been claimed by a worker; then both run together.
    const ids = await stack.db.transaction().execute(async (trx) => {
      await lockUsers(trx, users);
      const delivered = [
        await deliver(
          revenueCatTokenPurchase({ id: 'rc-fence-race-a', userId: users[0], transactionId: 'tx-fence-race' }),
        ),
        await deliver(
          revenueCatTokenPurchase({ id: 'rc-fence-race-b', userId: users[1], transactionId: 'tx-fence-race' }),
        ),
      ];
      // One event at a time per worker: each worker holds one of the two events.
      for (const _worker of [1, 2]) stack.startWorker({ concurrency: 1, batch: { maxItems: 1, maxTransactions: 1 } });
      await eventually('both workers to wait on the user locks', async () => {
        const waiting = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_locks
           WHERE locktype = 'advisory' AND NOT granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(stack.db);
        return (waiting.rows[0]?.n ?? 0) >= 2;
      });
      return delivered;
    });
    const rows = await Promise.all(ids.map((id) => finished(id)));

    const credited = rows.filter((row) => row.outcome_code === 'credited');
    const ignored = rows.filter((row) => row.outcome_code === 'transaction_already_credited');
    expect({ credited: credited.length, ignored: ignored.length }).toEqual({ credited: 1, ignored: 1 });
    expect(ignored.map((row) => row.status)).toEqual(['ignored']);
    const winner = credited[0];
    if (!winner?.user_id) throw new Error('no event credited');
    const loser = users.find((user) => user !== winner.user_id) ?? '';
    expect(await ledgerOf(stack.db, winner.user_id, columns)).toEqual([
      {
        reference: `revenuecat:event:${winner.provider_event_id}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: winner.id,
      },
    ]);
    expect(await ledgerOf(stack.db, loser)).toEqual([]);
    expect(await findWallet(stack.db, loser)).toEqual({ userId: loser, balance: 0 });
    expect(await claimsOf('tx-fence-race')).toEqual([
      expect.objectContaining({ user_id: winner.user_id, inbox_event_id: winner.id, verified: false }),
    ]);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it('refunds a store transaction once from the wallet it was credited to, found by transaction, whatever ids the refund names', async () => {
    stack.startWorker();
    const user = 'fence-refund-user';
    const purchase = await finished(
      await deliver(revenueCatTokenPurchase({ id: 'rc-fence-refund-buy', userId: user, transactionId: 'tx-fence-r' })),
    );
    expect(purchase.outcome_code).toBe('credited');
    // The same transaction again under another event id: nothing more to refund later.
    const again = await finished(
      await deliver(
        revenueCatTokenPurchase({ id: 'rc-fence-refund-again', userId: user, transactionId: 'tx-fence-r' }),
      ),
    );
    expect(again.outcome_code).toBe('transaction_already_credited');

    // A refund naming the purchase's transaction under another id (which it must not link).
    const refundBody = JSON.parse(
      revenueCatTokenPurchase({ id: 'rc-fence-refund', userId: 'fence-refund-other', transactionId: 'tx-fence-r' }),
    );
    Object.assign(refundBody.event, { type: 'CANCELLATION', cancel_reason: 'CUSTOMER_SUPPORT' });
    const refund = await finished(await deliver(JSON.stringify(refundBody)));
    expect([refund.status, refund.outcome_code, refund.outcome_detail]).toEqual([
      'processed',
      'refunded',
      'took back 100 tokens (tokens_100)',
    ]);
    expect(await ledgerOf(stack.db, user, columns)).toEqual([
      {
        reference: 'revenuecat:event:rc-fence-refund-buy',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: purchase.id,
      },
      {
        reference: 'revenuecat:refund:tx-fence-r',
        amount: -100,
        balance_before: 100,
        balance_after: 0,
        reason: 'token_pack_refund',
        inbox_event_id: refund.id,
      },
    ]);
    expect(await ledgerOf(stack.db, 'fence-refund-other')).toEqual([]);
    expect(
      await stack.db.selectFrom('user_aliases').select('alias').where('alias', '=', 'fence-refund-other').execute(),
    ).toEqual([]);
  });
});
