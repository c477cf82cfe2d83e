import {
  findWallet,
  type InboxHandlers,
  inboxJobId,
  RetryLaterError,
  references,
  retryLater,
  toCatalog,
} from '@tally/billing-core';
import { sql } from 'kysely';
import { processOne, withProviderRead } from '../../support/engine';
import { revenueCatTokenPurchase } from '../../support/events';
import { inboxHistoryOf, recordInboxHistory, retriesBeforeDue } from '../../support/inbox-history';
import { ledgerOf } from '../../support/ledger';
import { captureLogs, logLevels } from '../../support/log-capture';
import { eventually, type Json } from '../../support/stack';
import { suiteStack } from '../../support/suite';

/** Wraps the real handlers so a test can watch or steer the RevenueCat one. */
function wrapRevenueCat(real: InboxHandlers, wrap: Partial<InboxHandlers['revenuecat']>): InboxHandlers {
  return { ...real, revenuecat: { ...real.revenuecat, ...wrap } };
}

describe('the engine the flows plug into', () => {
  const stack = suiteStack();
  afterEach(() => stack.stopWorkers());

  const findRow = (providerEventId: string) => stack.inboxRow('revenuecat', providerEventId);

  it('retries a "retry later" event after its delay with its failure budget intact, then applies it', async () => {
    const real = stack.handlers();
    const state = { waitsLeft: 4, calls: 0 };
    const logs = captureLogs();
    await recordInboxHistory(stack.db);
    stack.startWorker({
      logger: logs.logger,
      maxAttempts: 2,
      handlers: wrapRevenueCat(real, {
        prepare: withProviderRead(real.revenuecat, async () => {
          state.calls += 1;
          if (state.waitsLeft > 0) {
            state.waitsLeft -= 1;
            // From a provider read (outside the transaction), like a 429 with Retry-After.
            throw new RetryLaterError('subscription not known yet', { delayMs: 150 });
          }
        }),
      }),
    });
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-wait-1', userId: 'wait-user' }));

    const waiting = await eventually('the event to be waiting', async () => {
      const row = await findRow('rc-wait-1');
      return row.outcome_code === 'waiting' ? row : undefined;
    });
    expect(waiting).toMatchObject({
      status: 'received',
      attempts: 0,
      last_error: null,
      outcome_detail: 'subscription not known yet',
    });
    expect(waiting.next_attempt_at).not.toBeNull();
    expect(waiting.waiting_since).not.toBeNull();

    const done = await eventually('the event to be processed', async () => {
      const row = await findRow('rc-wait-1');
      return row.status === 'processed' ? row : undefined;
    });
    // Four deferrals with a budget of two attempts: deferring spent none of it.
    expect(done).toMatchObject({ attempts: 1, deferrals: 4, outcome_code: 'credited', last_error: null });
    expect(done.waiting_since).toBeNull();
    expect(state.calls).toBe(5);
    // The row's history, from the database: claimed, given back to wait, claimed again only once
    // due (each deferral scheduled it after itself), four times, then processed.
    const history = await inboxHistoryOf(stack.db, done.id);
    expect(history.map((change) => [change.status, change.outcomeCode, change.deferrals])).toEqual([
      ['processing', null, 0],
      ['received', 'waiting', 1],
      ['processing', 'waiting', 1],
      ['received', 'waiting', 2],
      ['processing', 'waiting', 2],
      ['received', 'waiting', 3],
      ['processing', 'waiting', 3],
      ['received', 'waiting', 4],
      ['processing', 'waiting', 4],
      ['processed', 'credited', 4],
    ]);
    expect(retriesBeforeDue(history)).toEqual([]);
    expect(await ledgerOf(stack.db, 'wait-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-wait-1',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
    ]);
    // Waiting is not a failure: each deferral is logged at info with its reason, nothing at warn or above.
    const lines = logs.lines.filter((line) => line.providerEventId === 'rc-wait-1');
    expect(lines.filter((line) => line.level >= logLevels.warn)).toEqual([]);
    expect(
      lines
        .filter((line) => line.outcome === 'deferred')
        .map((line) => [line.level, line.msg, line.reason, line.delayMs]),
    ).toEqual(
      Array.from({ length: 4 }, () => [
        logLevels.info,
        'inbox event waits for a prerequisite; retrying later',
        'subscription not known yet',
        150,
      ]),
    );
    expect(lines.filter((line) => line.msg === 'inbox event finished')).toEqual([
      expect.objectContaining({ level: logLevels.info, outcome: 'processed', code: 'credited' }),
    ]);
  });

  it('rolls back a "retry later" returned from inside the transaction and parks the event after the maximum wait', async () => {
    const real = stack.handlers();
    let applied = 0;
    stack.startWorker({
      // Room for several 100 ms deferrals even on a loaded machine (400 ms allowed only 3 there).
      retryLater: { baseDelayMs: 100, maxDelayMs: 100, maxWaitMs: 1_200 },
      handlers: wrapRevenueCat(real, {
        async apply(uow, row, prepared) {
          applied += 1;
          // Effects written before the handler decides to wait must not survive.
          await real.revenuecat.apply(uow, row, prepared);
          return retryLater('the invoice this event pays is not known yet');
        },
      }),
    });
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-wait-forever', userId: 'forever-user' }));
    const parked = await eventually('the event to park after the maximum wait', async () => {
      const row = await findRow('rc-wait-forever');
      return row.status === 'failed' ? row : undefined;
    });
    expect(parked).toMatchObject({
      outcome_code: 'waited_too_long',
      outcome_detail: 'the invoice this event pays is not known yet',
      attempts: 0,
      last_error: expect.stringContaining('for: the invoice this event pays is not known yet'),
    });
    // It waited at least the maximum (database clock), deferring more than once, and no longer.
    expect(parked.deferrals).toBeGreaterThanOrEqual(2);
    expect(parked.updated_at.getTime() - (parked.waiting_since?.getTime() ?? Number.NaN)).toBeGreaterThanOrEqual(1_200);
    expect(applied).toBe(parked.deferrals);
    expect(await ledgerOf(stack.db, 'forever-user')).toEqual([]);
    expect(await findWallet(stack.db, 'forever-user')).toEqual({ userId: 'forever-user', balance: 0 });
    // The pack hands its credit over, so what its apply wrote is the store transaction's fence:
    // rolled back with the rest.
    const fences = await stack.db
      .selectFrom('revenuecat_pack_transactions')
      .select('store_transaction_id')
      .where('inbox_event_id', '=', parked.id)
      .execute();
    expect(fences).toEqual([]);
    const job = await stack.queue.getJob(inboxJobId(parked.id));
    expect(await job?.getState()).toBe('failed');
  });

  it('parks an event whose reference already posts another amount, and says why', async () => {
    // A bug elsewhere already used this event's reference for a different amount.
    await stack.postPlainEntry({
      userId: 'conflict-user',
      reference: references.revenuecatEvent('rc-conflict-1'),
      amount: 7,
      reason: 'manual_adjustment',
    });
    const worker = stack.startWorker();
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-conflict-1', userId: 'conflict-user' }));
    const parked = await eventually('the conflicting event to park', async () => {
      const row = await findRow('rc-conflict-1');
      return row.status === 'failed' ? row : undefined;
    });
    expect(parked).toMatchObject({
      attempts: 1,
      outcome_code: 'reference_conflict',
      last_error:
        'LedgerReferenceConflictError: ledger reference revenuecat:event:rc-conflict-1 already posts 7 to conflict-user; refusing 100 to conflict-user',
    });
    expect(await ledgerOf(stack.db, 'conflict-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-conflict-1',
        amount: 7,
        balance_before: 0,
        balance_after: 7,
        reason: 'manual_adjustment',
      },
    ]);
    const metrics = await worker.metrics.registry.metrics();
    expect(metrics).toContain('tally_ledger_reference_conflicts_total{provider="revenuecat",service="worker"} 1');
    expect(metrics).toContain(
      'tally_inbox_events_parked_total{provider="revenuecat",code="reference_conflict",service="worker"} 1',
    );
  });

  it('parks an event whose reference already posts the same amount to another user, and says why', async () => {
    // The same reference and amount, but another user's wallet: never "already posted".
    await stack.postPlainEntry({
      userId: 'conflict-other-user',
      reference: references.revenuecatEvent('rc-conflict-2'),
      amount: 100,
      reason: 'manual_adjustment',
    });
    const worker = stack.startWorker();
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-conflict-2', userId: 'conflict-user-2' }));
    const parked = await eventually('the conflicting event to park', async () => {
      const row = await findRow('rc-conflict-2');
      return row.status === 'failed' ? row : undefined;
    });
    expect(parked).toMatchObject({
      attempts: 1,
      outcome_code: 'reference_conflict',
      last_error:
        'LedgerReferenceConflictError: ledger reference revenuecat:event:rc-conflict-2 already posts 100 to conflict-other-user; refusing 100 to conflict-user-2',
    });
    // Neither wallet moved: the event's user got nothing, the other user kept exactly the one entry.
    expect(await ledgerOf(stack.db, 'conflict-user-2')).toEqual([]);
    expect(await findWallet(stack.db, 'conflict-user-2')).toEqual({ userId: 'conflict-user-2', balance: 0 });
    expect(await ledgerOf(stack.db, 'conflict-other-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-conflict-2',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'manual_adjustment',
      },
    ]);
    expect(await worker.metrics.registry.metrics()).toContain(
      'tally_ledger_reference_conflicts_total{provider="revenuecat",service="worker"} 1',
    );
  });

  it('changes nothing when a processed token-pack purchase is replayed', async () => {
    stack.startWorker();
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-replay-1', userId: 'replay-user' }));
    const first = await eventually('the purchase to be credited', async () => {
      const row = await findRow('rc-replay-1');
      return row.status === 'processed' ? row : undefined;
    });
    const response = await stack.apiRequest(`/admin/events/${first.id}/replay`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ replayed: 1, ids: [first.id], enqueued: 1, alreadyQueued: 0, deferred: 0 });
    const replayed = await eventually('the replay to finish', async () => {
      const row = await findRow('rc-replay-1');
      return row.status === 'processed' && row.replays === 1 ? row : undefined;
    });
    expect(replayed).toMatchObject({ outcome_code: 'already_credited', attempts: 1, last_error: null });
    expect(await ledgerOf(stack.db, 'replay-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-replay-1',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
    ]);
    expect(await findWallet(stack.db, 'replay-user')).toEqual({ userId: 'replay-user', balance: 100 });

    // A parked or waiting event is not replayed (requeue is for those).
    const conflict = await stack.apiRequest('/admin/events/999999/replay', { method: 'POST' });
    expect(conflict.status).toBe(404);
  });

  it('runs the current handler when an ignored event is replayed (a product added to the catalog later)', async () => {
    stack.startWorker();
    await stack.postRevenueCat(
      revenueCatTokenPurchase({ id: 'rc-new-pack', userId: 'later-user', productId: 'tokens.500' }),
    );
    const ignoredRow = await eventually('the unknown product to be ignored', async () => {
      const row = await findRow('rc-new-pack');
      return row.status === 'ignored' ? row : undefined;
    });
    expect(ignoredRow.outcome_code).toBe('not_in_catalog');
    await stack.stopWorkers();

    // The operator ships a catalog with the new pack, restarts the workers, and replays by filter.
    const data = structuredClone(stack.catalog.data) as Json;
    data.tokenPacks.push({ id: 'tokens_500', tokens: 500, revenuecatProducts: ['tokens.500'] });
    const catalog = toCatalog(data);
    const { createInboxHandlers } = await import('@tally/billing-core');
    stack.startWorker({
      handlers: createInboxHandlers({
        catalog,
        ports: stack.ports,
        policy: stack.policy,
        verifyRevenueCatPurchases: stack.verifyRevenueCatPurchases,
      }),
    });
    const response = await stack.apiRequest('/admin/events/replay', {
      method: 'POST',
      body: { provider: 'revenuecat', outcome: 'not_in_catalog', status: 'ignored' },
    });
    expect(await response.json()).toMatchObject({ replayed: 1, ids: [ignoredRow.id], enqueued: 1 });
    const credited = await eventually('the replayed event to be credited', async () => {
      const row = await findRow('rc-new-pack');
      return row.status === 'processed' ? row : undefined;
    });
    expect(credited).toMatchObject({ outcome_code: 'credited', replays: 1 });
    expect(await ledgerOf(stack.db, 'later-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-new-pack',
        amount: 500,
        balance_before: 0,
        balance_after: 500,
        reason: 'token_pack_purchase',
      },
    ]);
  });

  it.each([
    ['the one-transaction first attempt', false, false],
    ['the claimed path (a handler that reads its provider first)', true, false],
    ['coalesced first runs (batches across replicas)', false, true],
  ])(
    "applies one user's events one at a time across replicas, and different users' in parallel: %s",
    async (_path, reads, coalesced) => {
      const real = stack.handlers();
      // A provider read in prepare: every attempt then claims first. Each path counts its own
      // calls (the read; a ready prepare of a row no attempt claimed: the one transaction's), so
      // the test knows which one ran.
      let viaPath = 0;
      const read: Partial<InboxHandlers['revenuecat']> = reads
        ? {
            prepare: withProviderRead(real.revenuecat, async () => {
              viaPath += 1;
            }),
          }
        : {
            prepare(row, ctx) {
              const preparation = real.revenuecat.prepare(row, ctx);
              if (preparation.kind === 'ready' && row.attempts === 0) viaPath += 1;
              return preparation;
            },
          };
      const running = new Map<string, number>();
      const overlaps = new Map<string, number>();
      let maxParallel = 0;
      let total = 0;
      const handlers = wrapRevenueCat(real, {
        ...read,
        async apply(uow, row, prepared) {
          const user = row.user_id ?? '';
          const now = (running.get(user) ?? 0) + 1;
          running.set(user, now);
          total += 1;
          maxParallel = Math.max(maxParallel, total);
          if (now > 1) overlaps.set(user, (overlaps.get(user) ?? 0) + 1);
          try {
            await sql`SELECT pg_sleep(0.03)`.execute(uow.trx);
            return await real.revenuecat.apply(uow, row, prepared);
          } finally {
            running.set(user, (running.get(user) ?? 1) - 1);
            total -= 1;
          }
        },
      });
      // Each first run alone, or (coalesced) up to 6 per transaction, one transaction per worker:
      // a batch applies its users' events one after the other, so only the other replica's batch
      // can run beside it.
      const batch = coalesced ? { maxItems: 6, maxTransactions: 1 } : { maxItems: 1, maxTransactions: 6 };
      stack.startWorker({ concurrency: 6, handlers, batch });
      stack.startWorker({ concurrency: 6, handlers, batch });
      const users = reads ? ['serial-c', 'serial-d'] : coalesced ? ['serial-e', 'serial-f'] : ['serial-a', 'serial-b'];
      const events = users.flatMap((userId) =>
        Array.from({ length: 8 }, (_, i) => ({ id: `rc-${userId}-${i}`, userId })),
      );
      await Promise.all(events.map((event) => stack.postRevenueCat(revenueCatTokenPurchase(event))));
      await eventually('all events to be processed', async () => {
        const rows = await stack.db.selectFrom('inbox_events').select('status').where('user_id', 'in', users).execute();
        return rows.length === 16 && rows.every((row) => row.status === 'processed');
      });
      expect(viaPath).toBeGreaterThanOrEqual(16);
      expect(Object.fromEntries(overlaps)).toEqual({});
      // The two users did run side by side. Coalesced, a batch applies its users one after the
      // other, and the other replica's batch naming the same users waits for its locks: only the
      // one-at-a-time property is asserted there.
      if (coalesced) expect(maxParallel).toBeLessThanOrEqual(2);
      else expect(maxParallel).toBe(2);
    },
  );

  it('recovers an event left in processing by a worker that died mid-run', async () => {
    const inboxEventId = await stack.db
      .insertInto('inbox_events')
      .values({
        provider: 'revenuecat',
        provider_event_id: 'rc-orphaned',
        type: 'NON_RENEWING_PURCHASE',
        livemode: true,
        environment: 'production',
        user_id: 'orphan-user',
        raw_body: revenueCatTokenPurchase({ id: 'rc-orphaned', userId: 'orphan-user' }),
        // Claimed a while ago by a worker that then died; its job is gone with it.
        status: 'processing',
        attempts: 1,
        enqueued_at: sql<Date>`now() - interval '10 minutes'`,
        updated_at: sql<Date>`now() - interval '10 minutes'`,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const worker = stack.startWorker({
      relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 1_000, batchSize: 10 },
    });
    const row = await eventually('the orphaned event to be processed', async () => {
      const found = await findRow('rc-orphaned');
      return found.status === 'processed' ? found : undefined;
    });
    expect(row).toMatchObject({ id: inboxEventId.id, attempts: 2, outcome_code: 'credited' });
    expect(await ledgerOf(stack.db, 'orphan-user')).toEqual([
      {
        reference: 'revenuecat:event:rc-orphaned',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
      },
    ]);
    // Counted once: the job was really missing.
    expect(await worker.metrics.registry.metrics()).toContain(
      'tally_relay_reenqueued_total{source="inbox",service="worker"} 1',
    );
  });

  it('does not re-enqueue a row waiting out its backoff, and counts only jobs that were really missing', async () => {
    const worker = stack.startWorker({
      roles: ['relay'],
      relay: { intervalMs: 60_000, staleAfterMs: 100, processingStaleAfterMs: 100, batchSize: 10 },
    });
    const { id } = await stack.db
      .insertInto('inbox_events')
      .values({
        provider: 'revenuecat',
        provider_event_id: 'rc-backing-off',
        type: 'NON_RENEWING_PURCHASE',
        livemode: true,
        environment: 'production',
        user_id: 'backoff-user',
        raw_body: revenueCatTokenPurchase({ id: 'rc-backing-off', userId: 'backoff-user' }),
        attempts: 3,
        enqueued_at: sql<Date>`now() - interval '1 hour'`,
        next_attempt_at: sql<Date>`now() + interval '1 hour'`,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await worker.loops.relay?.runOnce();
    expect(await stack.queue.getJob(inboxJobId(id))).toBeUndefined();

    // Once due (and a job is still waiting for it), the relay finds the job and adds nothing.
    await stack.db
      .updateTable('inbox_events')
      .set({ next_attempt_at: sql`now() - interval '1 minute'` })
      .where('id', '=', id)
      .execute();
    await stack.queue.add('process', { inboxEventId: id }, { jobId: inboxJobId(id) });
    await worker.loops.relay?.runOnce();
    expect(await stack.queue.getJobCounts('waiting')).toMatchObject({ waiting: 1 });
    expect(await worker.metrics.registry.metrics()).toContain(
      'tally_relay_reenqueued_total{source="inbox",service="worker"} 0',
    );
    await stack.queue.obliterate({ force: true });
    await stack.db.updateTable('inbox_events').set({ status: 'ignored' }).where('id', '=', id).execute();
  });

  it('runs only the roles a worker is given', async () => {
    stack.startWorker({
      roles: ['relay'],
      relay: { intervalMs: 50, staleAfterMs: 50, processingStaleAfterMs: 50, batchSize: 10 },
    });
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-role-1', userId: 'role-user' }));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await findRow('rc-role-1')).status).toBe('received');
    stack.startWorker({ roles: ['inbox'] });
    await eventually('an inbox worker to process it', async () => (await findRow('rc-role-1')).status === 'processed');
  });

  it('processes directly through the engine without a queue (the engine needs only the database and handlers)', async () => {
    const { id } = await stack.db
      .insertInto('inbox_events')
      .values({
        provider: 'revenuecat',
        provider_event_id: 'rc-direct',
        type: 'NON_RENEWING_PURCHASE',
        livemode: true,
        environment: 'production',
        user_id: 'direct-user',
        raw_body: revenueCatTokenPurchase({ id: 'rc-direct', userId: 'direct-user' }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const result = await processOne(stack.processorDeps(), id);
    expect(result).toMatchObject({ kind: 'processed', code: 'credited', detail: 'credited 100 tokens (tokens_100)' });
    expect(await processOne(stack.processorDeps(), id)).toEqual({ kind: 'skipped', status: 'processed' });
  });
});
