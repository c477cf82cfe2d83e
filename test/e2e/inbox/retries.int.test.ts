import { findWallet, type InboxHandlers, InvalidEventError, inboxJobId } from '@tally/billing-core';
import { withProviderRead } from '../../support/engine';
import { revenueCatTokenPurchase } from '../../support/events';
import { inboxHistoryOf, recordInboxHistory, retriesBeforeDue } from '../../support/inbox-history';
import { eventually } from '../../support/stack';
import { suiteStack } from '../../support/suite';
import { untilInboxRows } from '../../support/waits';

/**
 * A RevenueCat handler whose provider read fails while `failing` is true, as when RevenueCat's
 * API is down: the failure happens in `prepare`, before any transaction.
 */
function flakyHandlers(
  real: InboxHandlers,
  state: { failing: boolean; calls: number; retryable?: boolean },
): InboxHandlers {
  return {
    ...real,
    revenuecat: {
      prepare: withProviderRead(real.revenuecat, async () => {
        state.calls += 1;
        if (state.failing) {
          if (state.retryable === false) throw new InvalidEventError('this event can never be applied');
          throw new Error(`provider unavailable (call ${state.calls})`);
        }
      }),
      apply: real.revenuecat.apply,
    },
  };
}

describe('processing failures: retries, parking and requeue', () => {
  const stack = suiteStack();
  afterEach(() => stack.stopWorkers());

  const findRow = (providerEventId: string) => stack.inboxRow('revenuecat', providerEventId);

  /** The inbox job once BullMQ has recorded its failure (it does so after the row is parked). */
  // The state first, then the job: a job read just before BullMQ recorded its failure carries no
  // failedReason yet though its state, read after, says failed (the PgBouncer pass of CI met it).
  const failedJobOf = (inboxEventId: number) =>
    eventually('the job to be failed in the queue', async () => {
      if ((await stack.queue.getJobState(inboxJobId(inboxEventId))) !== 'failed') return undefined;
      return stack.queue.getJob(inboxJobId(inboxEventId));
    });

  it('records attempts and the last error, retries with backoff, parks after the cap, and processes after a requeue', async () => {
    const state = { failing: true, calls: 0 };
    stack.startWorker({
      maxAttempts: 3,
      backoff: { baseDelayMs: 100, maxDelayMs: 400 },
      handlers: flakyHandlers(stack.handlers(), state),
    });
    await recordInboxHistory(stack.db);
    expect(
      (await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-flaky-1', userId: 'flaky-user' }))).status,
    ).toBe(200);

    const parked = await eventually('the event to be parked', async () => {
      const row = await findRow('rc-flaky-1');
      return row.status === 'failed' ? row : undefined;
    });
    expect(parked).toMatchObject({
      attempts: 3,
      last_error: 'Error: provider unavailable (call 3)',
      processed_at: null,
    });
    expect(state.calls).toBe(3);
    // The row's history, from the database: each failed attempt scheduled the next one after
    // itself (backoff), and each retry was claimed only once due; the third failure parks it.
    const history = await inboxHistoryOf(stack.db, parked.id);
    expect(history.map((change) => [change.status, change.outcomeCode, change.attempts])).toEqual([
      ['processing', null, 1],
      ['received', 'retrying', 1],
      ['processing', 'retrying', 2],
      ['received', 'retrying', 2],
      ['processing', 'retrying', 3],
      ['failed', 'attempts_exhausted', 3],
    ]);
    expect(history.filter((change) => change.status === 'received').every((change) => change.nextAttemptAt)).toBe(true);
    expect(retriesBeforeDue(history)).toEqual([]);
    // The row parks in Postgres before BullMQ records the job's failure in Redis: wait for that.
    const job = await failedJobOf(parked.id);
    expect(job.failedReason).toContain('parked (attempts_exhausted) after 3 attempts');
    expect(await findWallet(stack.db, 'flaky-user')).toEqual({ userId: 'flaky-user', balance: 0 });

    // The parked row stays parked: nothing consumes it any more.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(state.calls).toBe(3);

    state.failing = false;
    const response = await stack.apiRequest(`/admin/events/${parked.id}/requeue`, { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      requeued: 1,
      ids: [parked.id],
      enqueued: 1,
      alreadyQueued: 0,
      deferred: 0,
    });

    const processed = await eventually('the requeued event to be processed', async () => {
      const row = await findRow('rc-flaky-1');
      return row.status === 'processed' ? row : undefined;
    });
    expect(processed).toMatchObject({
      attempts: 1,
      last_error: null,
      outcome_code: 'credited',
      outcome_detail: 'credited 100 tokens (tokens_100)',
    });
    expect(await findWallet(stack.db, 'flaky-user')).toEqual({ userId: 'flaky-user', balance: 100 });
  });

  it("parks on the row's own attempt cap even when it is above the queue's attempts (the row, not BullMQ, decides)", async () => {
    const state = { failing: true, calls: 0 };
    // Far above queueCatalog.inbox.attempts (25): BullMQ must never fail the job first.
    const maxAttempts = 40;
    stack.startWorker({
      maxAttempts,
      backoff: { baseDelayMs: 2, maxDelayMs: 4 },
      handlers: flakyHandlers(stack.handlers(), state),
    });
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-many-attempts', userId: 'many-user' }));
    const parked = await eventually(
      'the event to park at its own cap',
      async () => {
        const row = await findRow('rc-many-attempts');
        return row.status === 'failed' ? row : undefined;
      },
      30_000,
    );
    expect(parked).toMatchObject({ attempts: maxAttempts, outcome_code: 'attempts_exhausted' });
    expect(state.calls).toBe(maxAttempts);
    const job = await failedJobOf(parked.id);
    expect(job.failedReason).toContain(`parked (attempts_exhausted) after ${maxAttempts} attempts`);
  });

  it('parks at once on a non-retryable error', async () => {
    const state = { failing: true, calls: 0, retryable: false };
    stack.startWorker({ maxAttempts: 15, handlers: flakyHandlers(stack.handlers(), state) });
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-poison-1', userId: 'poison-user' }));
    const parked = await eventually('the event to be parked', async () => {
      const row = await findRow('rc-poison-1');
      return row.status === 'failed' ? row : undefined;
    });
    expect(parked).toMatchObject({
      attempts: 1,
      outcome_code: 'invalid_event',
      last_error: 'InvalidEventError: this event can never be applied',
    });
    expect(state.calls).toBe(1);
  });

  it('requeues parked events by filter and answers 409 for an event that is not parked', async () => {
    const state = { failing: true, calls: 0, retryable: false };
    stack.startWorker({ handlers: flakyHandlers(stack.handlers(), state) });
    for (const id of ['rc-batch-1', 'rc-batch-2']) {
      await stack.postRevenueCat(revenueCatTokenPurchase({ id, userId: 'batch-user' }));
    }
    await untilInboxRows(
      stack.db,
      { userId: 'batch-user' },
      { status: 'failed', count: 2 },
      'both events to be parked',
    );
    state.failing = false;
    const response = await stack.apiRequest('/admin/events/requeue', {
      method: 'POST',
      body: { userId: 'batch-user' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ requeued: 2, enqueued: 2, deferred: 0 });
    await untilInboxRows(stack.db, { userId: 'batch-user' }, { status: 'processed' }, 'both events to be processed');
    expect(await findWallet(stack.db, 'batch-user')).toEqual({ userId: 'batch-user', balance: 200 });

    const processed = await findRow('rc-batch-1');
    const again = await stack.apiRequest(`/admin/events/${processed.id}/requeue`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      error: { code: 'not_parked', message: expect.stringContaining('processed') },
    });
    expect((await stack.apiRequest('/admin/events/999999/requeue', { method: 'POST' })).status).toBe(404);
  });
});
