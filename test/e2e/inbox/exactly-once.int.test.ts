import {
  findWallet,
  parseRevenueCatWebhook,
  recordInboxEvent,
  toRevenueCatInboxDraft,
  verifyLedger,
} from '@tally/billing-core';
import { firstRun, processOne, retryRun } from '../../support/engine';
import { revenueCatTokenPurchase } from '../../support/events';
import { ledgerOf } from '../../support/ledger';
import { eventually } from '../../support/stack';
import { suiteStack } from '../../support/suite';
import { untilInboxRows } from '../../support/waits';

describe('exactly-once effects under at-least-once delivery', () => {
  const stack = suiteStack();
  afterEach(() => stack.stopWorkers());

  async function recordPurchase(id: string, userId: string): Promise<number> {
    const body = revenueCatTokenPurchase({ id, userId });
    const recorded = await recordInboxEvent(stack.db, toRevenueCatInboxDraft(parseRevenueCatWebhook(body), body));
    if (recorded.kind !== 'recorded') throw new Error('expected a new row');
    return recorded.inboxEventId;
  }

  it('credits once when the same inbox row is processed five times at once', async () => {
    const inboxEventId = await recordPurchase('rc-race-1', 'race-user');
    const results = await Promise.all(Array.from({ length: 5 }, () => processOne(stack.processorDeps(), inboxEventId)));
    expect(results.filter((result) => result.kind === 'processed')).toHaveLength(1);
    expect(results.filter((result) => result.kind === 'skipped')).toHaveLength(4);
    const ledger = await ledgerOf(stack.db, 'race-user', ['reference', 'amount']);
    expect(ledger).toEqual([{ reference: 'revenuecat:event:rc-race-1', amount: 100 }]);
    expect(await findWallet(stack.db, 'race-user')).toEqual({ userId: 'race-user', balance: 100 });
  });

  it('runs a first attempt that needs no provider read as one transaction, and credits once when such runs race claimed ones', async () => {
    const single = await recordPurchase('rc-one-tx', 'one-tx-user');
    const first = await processOne(stack.processorDeps(), single, firstRun);
    expect(first).toMatchObject({ kind: 'processed', code: 'credited', path: 'one-transaction' });
    const row = await stack.db
      .selectFrom('inbox_events')
      .select(['status', 'attempts'])
      .where('id', '=', single)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'processed', attempts: 1 });

    const raced = await recordPurchase('rc-race-mixed', 'race-mixed-user');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => processOne(stack.processorDeps(), raced, i % 2 === 0 ? firstRun : retryRun)),
    );
    expect(results.filter((result) => result.kind === 'processed')).toHaveLength(1);
    expect(results.filter((result) => result.kind === 'skipped')).toHaveLength(5);
    const ledger = await ledgerOf(stack.db, 'race-mixed-user', ['reference', 'amount']);
    expect(ledger).toEqual([{ reference: 'revenuecat:event:rc-race-mixed', amount: 100 }]);
    expect(await findWallet(stack.db, 'race-mixed-user')).toEqual({ userId: 'race-mixed-user', balance: 100 });
  });

  it('counts a failed one-transaction first attempt like a claimed one, with its effects rolled back', async () => {
    const id = await recordPurchase('rc-one-tx-fails', 'one-tx-fail-user');
    const deps = stack.processorDeps();
    const failing = {
      ...deps,
      handlers: {
        ...deps.handlers,
        revenuecat: {
          ...deps.handlers.revenuecat,
          async apply(...args: Parameters<typeof deps.handlers.revenuecat.apply>) {
            await deps.handlers.revenuecat.apply(...args);
            throw new Error('failed after crediting, inside the transaction');
          },
        },
      },
    };
    const failed = await processOne(failing, id, firstRun);
    expect(failed).toMatchObject({ kind: 'failed', parked: false, code: 'error' });
    expect(failed.kind === 'failed' && failed.row).toMatchObject({
      status: 'received',
      attempts: 1,
      outcome_code: 'retrying',
    });
    expect(await findWallet(stack.db, 'one-tx-fail-user')).toEqual({ userId: 'one-tx-fail-user', balance: 0 });

    // The retry is not a first run: it claims (attempt 2) and credits once.
    const retried = await processOne(deps, id, retryRun);
    expect(retried).toMatchObject({ kind: 'processed', path: 'claimed', row: { attempts: 2 } });
    expect(await findWallet(stack.db, 'one-tx-fail-user')).toEqual({ userId: 'one-tx-fail-user', balance: 100 });
  });

  it('credits once when a job runs again after its event committed (worker killed before acknowledging)', async () => {
    stack.startWorker();
    const response = await stack.postRevenueCat(
      revenueCatTokenPurchase({ id: 'rc-redelivered-job', userId: 'ack-user' }),
    );
    expect(response.status).toBe(200);
    const row = await eventually('the event to be processed', async () => {
      const found = await stack.db
        .selectFrom('inbox_events')
        .selectAll()
        .where('provider_event_id', '=', 'rc-redelivered-job')
        .executeTakeFirst();
      return found?.status === 'processed' ? found : undefined;
    });

    // BullMQ redelivers a stalled job: the same inbox id arrives in a second job.
    const again = await stack.queue.add('process', { inboxEventId: row.id }, { jobId: `inbox-${row.id}-redelivery` });
    await eventually('the redelivered job to complete', async () => (await again.getState()) === 'completed');
    const job = await stack.queue.getJob(`inbox-${row.id}-redelivery`);
    expect(job?.returnvalue).toEqual({ status: 'skipped', rowStatus: 'processed' });

    const ledger = await ledgerOf(stack.db, 'ack-user', ['reference', 'amount']);
    expect(ledger).toEqual([{ reference: 'revenuecat:event:rc-redelivered-job', amount: 100 }]);
    const after = await stack.db
      .selectFrom('inbox_events')
      .select(['status', 'attempts'])
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(after).toEqual({ status: 'processed', attempts: 1 });
  });

  it('credits once when the effect committed but the processed mark was lost (the ledger reference fences the replay)', async () => {
    const inboxEventId = await recordPurchase('rc-lost-mark', 'mark-user');
    expect((await processOne(stack.processorDeps(), inboxEventId)).kind).toBe('processed');
    // Force the row back as if the mark had never been written; effects must still not repeat.
    await stack.db.updateTable('inbox_events').set({ status: 'received' }).where('id', '=', inboxEventId).execute();
    const replay = await processOne(stack.processorDeps(), inboxEventId);
    expect(replay).toMatchObject({
      kind: 'processed',
      code: 'already_credited',
      detail: 'already credited (revenuecat:event:rc-lost-mark)',
    });
    expect(await findWallet(stack.db, 'mark-user')).toEqual({ userId: 'mark-user', balance: 100 });
  });

  it("keeps one user's ledger chain intact when two worker replicas process 40 of their events at once", async () => {
    stack.startWorker({ concurrency: 8 });
    stack.startWorker({ concurrency: 8 });
    const ids = Array.from({ length: 40 }, (_, i) => `rc-fleet-${i}`);
    const responses = await Promise.all(
      ids.map((id) => stack.postRevenueCat(revenueCatTokenPurchase({ id, userId: 'fleet-user' }))),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    await untilInboxRows(
      stack.db,
      { userId: 'fleet-user' },
      { status: 'processed', count: 40 },
      'all 40 events to be processed',
    );
    const ledger = await ledgerOf(stack.db, 'fleet-user', ['balance_before', 'balance_after']);
    expect(ledger).toEqual(
      Array.from({ length: 40 }, (_, i) => ({ balance_before: i * 100, balance_after: (i + 1) * 100 })),
    );
    expect(await findWallet(stack.db, 'fleet-user')).toEqual({ userId: 'fleet-user', balance: 4000 });
    expect(await verifyLedger(stack.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
