import type { IncomingMessage } from 'node:http';
import {
  claimStudioRequest,
  createAiStudioClient,
  createStudioRequest,
  failStudioRequest,
  lockStudioUser,
  openUnitOfWork,
  plainLots,
  postLedgerEntry,
  processStudioRequest,
  references,
  refundStudioRequest,
  STUDIO_LOCK_NAMESPACE,
  studioRelaySource,
  sweepStuckStudioRequests,
} from '@tally/billing-core';
import { sql } from 'kysely';
import { FakeAiStudio } from '../../support/fakes/fake-ai-studio';
import { ledgerOf } from '../../support/ledger';
import { freePort } from '../../support/ports';
import { defaultWorkerSettings, eventually, type Json, readJson, TestStack } from '../../support/stack';

const AI_TIMEOUT_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('AI Studio: every debit ends in a completed generation or exactly one refund', () => {
  let stack: TestStack;
  let ai: FakeAiStudio;
  let userSeq = 0;

  beforeAll(async () => {
    ai = await FakeAiStudio.start();
    stack = await TestStack.start({
      ports: { aiStudio: createAiStudioClient({ baseUrl: ai.url, apiKey: ai.apiKey, timeoutMs: AI_TIMEOUT_MS }) },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await ai.stop();
  });
  afterEach(async () => {
    await stack.stopWorkers();
    stack.clock.reset();
  });

  const newUser = () => `studio-user-${++userSeq}-${Date.now().toString(36)}`;

  const grant = (userId: string, amount: number) =>
    stack.postPlainEntry({ userId, reference: `test:grant:${userId}:${amount}`, amount, reason: 'test_grant' });

  const post = (userId: string, body: unknown) =>
    stack.apiRequest(`/v1/users/${userId}/studio/requests`, { method: 'POST', body });

  const postOk = async (userId: string, body: unknown): Promise<Json> => {
    const response = await post(userId, body);
    const json = await readJson(response);
    expect({ status: response.status, json }).toMatchObject({ status: 202 });
    return json;
  };

  const getRequest = async (userId: string, id: string): Promise<Json> =>
    readJson(await stack.apiRequest(`/v1/users/${userId}/studio/requests/${id}`));

  const row = (publicId: string) =>
    stack.db.selectFrom('studio_requests').selectAll().where('public_id', '=', publicId).executeTakeFirstOrThrow();

  const balanceOf = async (userId: string) =>
    (await stack.db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst())
      ?.balance ?? 0;

  /** The ledger explains the balance: the rows chain and sum to the cached balance. */
  const expectLedgerExplainsBalance = async (userId: string) => {
    const ledger = await ledgerOf(stack.db, userId);
    let running = 0;
    for (const entry of ledger) {
      expect(entry.balance_before).toBe(running);
      running += entry.amount;
      expect(entry.balance_after).toBe(running);
      expect(entry.balance_after).toBeGreaterThanOrEqual(0);
    }
    expect(await balanceOf(userId)).toBe(running);
  };

  /** Uses up the free music allowance of the current UTC day (two clips, generated successfully). */
  const spendFreeMusic = async (userId: string) => {
    for (let i = 0; i < 2; i += 1) {
      const created = await postOk(userId, { kind: 'music', durationSeconds: 10, input: { prompt: `free ${i}` } });
      expect(created).toMatchObject({ tokensCharged: 0, freeTier: true });
    }
  };

  /** Transactions of this test database waiting for a user's studio lock (the one createStudioRequest takes). */
  const studioLockWaiters = async () => {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting
        FROM pg_locks l JOIN pg_database d ON d.oid = l.database
       WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted
         AND l.classid = ${STUDIO_LOCK_NAMESPACE}`.execute(stack.db);
    return rows[0]?.waiting ?? 0;
  };

  /**
   * Runs `start` while this test holds the user's studio lock, waits until `waiters` transactions
   * queue behind it, then releases them all at once and returns what `start` returned.
   */
  const releasedTogether = async <T>(userId: string, waiters: number, start: () => Promise<T>): Promise<T> => {
    const holder = await stack.db.startTransaction().execute();
    let released = false;
    try {
      await lockStudioUser(holder, userId);
      const racing = start();
      racing.catch(() => undefined); // awaited below; a failure while waiting must not go unhandled.
      await eventually(`${waiters} requests to wait on the studio lock`, async () => {
        return (await studioLockWaiters()) === waiters;
      });
      await holder.commit().execute();
      released = true;
      return await racing;
    } finally {
      if (!released) await holder.rollback().execute();
    }
  };

  it('with a balance of 5, two 5-token requests at the same instant: one is accepted, one gets 402, and the balance never goes below zero', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    const requestsBefore = await stack.db
      .selectFrom('studio_requests')
      .select('public_id')
      .where('user_id', '=', userId)
      .execute();

    // Both requests are inside their transactions (user and wallet ensured) and queued on the
    // user's lock before either may read the balance: released together, they decide one after
    // the other, and the second must see the first one's debit.
    const responses = await releasedTogether(userId, 2, () =>
      Promise.all([1, 2].map(() => post(userId, { kind: 'music', durationSeconds: 30, input: { prompt: 'race' } }))),
    );
    const answers = await Promise.all(responses.map(async (r) => ({ status: r.status, body: await readJson(r) })));
    answers.sort((a, b) => a.status - b.status);
    expect(answers.map((a) => a.status)).toEqual([202, 402]);
    const [accepted, refused] = answers as [Json, Json];
    expect(accepted.body).toEqual({ id: expect.any(String), status: 'received', tokensCharged: 5, freeTier: false });
    expect(refused.body).toEqual({
      error: { code: 'insufficient_balance', message: expect.any(String) },
      balance: 0,
      available: 0,
      price: 5,
    });

    // The 402 wrote nothing: one new request row, one debit.
    const requestsAfter = await stack.db
      .selectFrom('studio_requests')
      .select('public_id')
      .where('user_id', '=', userId)
      .execute();
    expect(requestsAfter).toHaveLength(requestsBefore.length + 1);
    expect(await ledgerOf(stack.db, userId)).toEqual([
      { reference: `test:grant:${userId}:5`, amount: 5, balance_before: 0, balance_after: 5, reason: 'test_grant' },
      {
        reference: references.studioDebit(accepted.body.id),
        amount: -5,
        balance_before: 5,
        balance_after: 0,
        reason: 'studio_music_clip',
      },
    ]);
    expect(await balanceOf(userId)).toBe(0);
    await expectLedgerExplainsBalance(userId);
  });

  it('a 402 for a short balance writes nothing at all (no request row, no ledger row)', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    const before = await stack.db.selectFrom('studio_requests').select('id').where('user_id', '=', userId).execute();
    const response = await post(userId, { kind: 'music', full: true, input: { prompt: 'a full song' } });
    expect(response.status).toBe(402);
    expect(await readJson(response)).toEqual({
      error: { code: 'insufficient_balance', message: 'this request costs 15 tokens and the wallet has 0 available' },
      balance: 0,
      available: 0,
      price: 15,
    });
    const after = await stack.db.selectFrom('studio_requests').select('id').where('user_id', '=', userId).execute();
    expect(after).toEqual(before);
    expect(await ledgerOf(stack.db, userId)).toEqual([]);
  });

  it('the sixth image edit of a UTC day costs tokens', async () => {
    const userId = newUser();
    await grant(userId, 20);
    stack.clock.set('2031-03-04T10:00:00Z');
    for (let i = 1; i <= 5; i += 1) {
      expect(await postOk(userId, { kind: 'image_edit', input: { edit: i } })).toMatchObject({
        status: 'received',
        tokensCharged: 0,
        freeTier: true,
      });
    }
    const sixth = await postOk(userId, { kind: 'image_edit', input: { edit: 6 } });
    expect(sixth).toMatchObject({ tokensCharged: 5, freeTier: false });
    expect(await balanceOf(userId)).toBe(15);
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount])).toEqual([
      [`test:grant:${userId}:20`, 20],
      [references.studioDebit(sixth.id), -5],
    ]);
    expect(await getRequest(userId, sixth.id)).toMatchObject({
      id: sixth.id,
      kind: 'image_edit',
      usageDay: '2031-03-04',
      priceTokens: 5,
      tokensCharged: 5,
      freeTier: false,
    });
  });

  it('concurrent free requests cannot take more free slots than the allowance', async () => {
    const userId = newUser();
    stack.clock.set('2031-03-05T08:00:00Z');
    // Hold the new user's first credit open: every racer blocks on creating the same user, and
    // all are released at the same instant when it commits.
    const opening = await stack.db.startTransaction().execute();
    await postLedgerEntry(openUnitOfWork(opening, stack.outbox), {
      userId,
      reference: `test:grant:${userId}:50`,
      amount: 50,
      reason: 'test_grant',
      lots: plainLots(50),
    });
    // Released only once all eight requests have reached the api and one of them waits on a lock
    // in this database (the held credit, or the user's studio lock behind it). Behind PgBouncer
    // the others may wait for a server connection instead: either way none can finish first. The
    // check runs on the held transaction's own connection (behind the pooler, the racers can
    // hold every other server connection).
    let arrived = 0;
    const count = (request: IncomingMessage) => {
      if (request.url?.includes(`/users/${userId}/studio/requests`)) arrived += 1;
    };
    stack.api.server.on('request', count);
    const racing = Promise.all(
      Array.from({ length: 8 }, (_, i) => postOk(userId, { kind: 'image_edit', input: { race: i } })),
    );
    await eventually('all eight racers at the api, one waiting on a lock', async () => {
      // Activity is read once per transaction unless its snapshot is cleared.
      await sql`SELECT pg_stat_clear_snapshot()`.execute(opening);
      const waiting = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(opening);
      return arrived === 8 && (waiting.rows[0]?.n ?? 0) >= 1;
    });
    stack.api.server.off('request', count);
    await opening.commit().execute();
    const racers = await racing;
    expect(racers.filter((r) => r.freeTier)).toHaveLength(5);
    expect(racers.filter((r) => !r.freeTier && r.tokensCharged === 5)).toHaveLength(3);
    expect(await balanceOf(userId)).toBe(35);
    await expectLedgerExplainsBalance(userId);
  });

  it('a failed free edit does not use up the allowance', async () => {
    const userId = newUser();
    await grant(userId, 10);
    stack.clock.set('2031-03-06T12:00:00Z');
    stack.startWorker({ roles: ['studio'] });
    const free: Json[] = [];
    for (let i = 1; i <= 5; i += 1) {
      free.push(await postOk(userId, { kind: 'image_edit', input: { edit: i, fake: i === 3 ? 'fail' : 'succeed' } }));
    }
    expect(free.every((r) => r.freeTier)).toBe(true);
    const failed = await eventually('the third free edit to fail', async () => {
      const view = await getRequest(userId, free[2].id);
      return view.status === 'failed' ? view : undefined;
    });
    expect(failed).toMatchObject({ freeTier: true, tokensCharged: 0, refunded: false, error: { code: 'ai_failed' } });

    // The failed one gave its slot back: one more free edit, then edits cost tokens.
    expect(await postOk(userId, { kind: 'image_edit', input: { edit: 6 } })).toMatchObject({ freeTier: true });
    expect(await postOk(userId, { kind: 'image_edit', input: { edit: 7 } })).toMatchObject({
      freeTier: false,
      tokensCharged: 5,
    });
    // A free failure moves no money: the only studio ledger row is the seventh edit's debit.
    expect((await ledgerOf(stack.db, userId)).map((e) => e.reason)).toEqual(['test_grant', 'studio_image_edit']);
    expect(await balanceOf(userId)).toBe(5);
  });

  it('the free allowance resets at UTC midnight (injected clock)', async () => {
    const userId = newUser();
    await grant(userId, 5);
    stack.clock.set('2031-03-07T23:59:58Z');
    await spendFreeMusic(userId);
    stack.clock.set('2031-03-07T23:59:59.999Z');
    expect(await postOk(userId, { kind: 'music', durationSeconds: 5, input: {} })).toMatchObject({
      freeTier: false,
      tokensCharged: 5,
    });
    expect(await balanceOf(userId)).toBe(0);
    stack.clock.set('2031-03-08T00:00:00Z');
    const nextDay = await postOk(userId, { kind: 'music', durationSeconds: 5, input: {} });
    expect(nextDay).toMatchObject({ freeTier: true, tokensCharged: 0 });
    expect(await getRequest(userId, nextDay.id)).toMatchObject({ usageDay: '2031-03-08' });
  });

  it('an AI failure ends the request failed and refunded once, after exactly one call', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    stack.startWorker({ roles: ['studio'] });
    const created = await postOk(userId, { kind: 'music', durationSeconds: 20, input: { fake: 'fail' } });
    expect(created).toMatchObject({ tokensCharged: 5, freeTier: false });
    const view = await eventually('the request to fail', async () => {
      const v = await getRequest(userId, created.id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(view).toMatchObject({
      status: 'failed',
      refunded: true,
      result: null,
      tokensCharged: 5,
      attempts: 1,
      error: { code: 'ai_failed', message: expect.stringContaining('500') },
    });
    expect(ai.callsFor(created.id)).toHaveLength(1);
    expect(ai.callsFor(created.id)[0]?.body).toEqual({
      requestId: created.id,
      kind: 'music',
      durationSeconds: 20,
      full: false,
      input: { fake: 'fail' },
    });
    const studioRows = (await ledgerOf(stack.db, userId)).filter((e) => e.reference.startsWith('studio:'));
    expect(studioRows).toEqual([
      {
        reference: references.studioDebit(created.id),
        amount: -5,
        balance_before: 5,
        balance_after: 0,
        reason: 'studio_music_clip',
      },
      {
        reference: references.studioRefund(created.id),
        amount: 5,
        balance_before: 0,
        balance_after: 5,
        reason: 'studio_refund',
      },
    ]);
    expect(await balanceOf(userId)).toBe(5);
  });

  it('an AI timeout ends the request failed and refunded once, and is not retried', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 15);
    stack.startWorker({ roles: ['studio'] });
    const created = await postOk(userId, { kind: 'music', full: true, input: { fake: 'hang' } });
    expect(created).toMatchObject({ tokensCharged: 15 });
    const view = await eventually('the request to time out', async () => {
      const v = await getRequest(userId, created.id);
      return v.status === 'failed' ? v : undefined;
    });
    expect(view).toMatchObject({ refunded: true, attempts: 1, error: { code: 'ai_timeout' } });
    // Not retried: the request's job has finished (nothing of it waits, runs or is delayed), so
    // no further call can come, and the AI service saw exactly one.
    const studioRequestId = Number((await row(created.id)).id);
    const job = await stack.studioQueue.getJob(stack.studioQueue.definition.jobId({ studioRequestId }));
    if (!job) throw new Error(`no studio job for request ${studioRequestId}`);
    await eventually('the studio job to finish', async () => (await job.isCompleted()) || (await job.isFailed()));
    expect(ai.callsFor(created.id)).toHaveLength(1);
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount])).toEqual([
      [`test:grant:${userId}:15`, 15],
      [references.studioDebit(created.id), -15],
      [references.studioRefund(created.id), 15],
    ]);
    expect(await balanceOf(userId)).toBe(15);
  });

  it('an AI connection dropped mid-call ends the request failed and refunded once, after exactly one call', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    // A long timeout: only the dropped connection can end this call.
    stack.startWorker({
      roles: ['studio'],
      studio: { aiStudio: createAiStudioClient({ baseUrl: ai.url, apiKey: ai.apiKey, timeoutMs: 60_000 }) },
    });
    const created = await postOk(userId, { kind: 'music', durationSeconds: 10, input: { fake: 'hang' } });
    await eventually('the AI service to receive the call', async () => ai.callsFor(created.id).length === 1);
    ai.dropConnections();
    // Settled, or (wrongly) claimed a second time: either ends the wait, the assertions tell which.
    const view = await eventually('the request to leave its first processing', async () => {
      const v = await getRequest(userId, created.id);
      return v.status !== 'processing' || v.attempts > 1 ? v : undefined;
    });
    expect(view).toMatchObject({
      status: 'failed',
      refunded: true,
      result: null,
      completedAt: null,
      tokensCharged: 5,
      attempts: 1,
      // The request may have reached the service: a broken call is a failure, never retried.
      error: { code: 'ai_failed', message: expect.stringContaining('the AI call broke') },
    });
    expect(ai.callsFor(created.id)).toHaveLength(1);
    expect(ai.callsFor(created.id)[0]?.answeredWith).toBeUndefined();
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount])).toEqual([
      [`test:grant:${userId}:5`, 5],
      [references.studioDebit(created.id), -5],
      [references.studioRefund(created.id), 5],
    ]);
    await expectLedgerExplainsBalance(userId);
    expect(await balanceOf(userId)).toBe(5);
  });

  it('without an AI service configured, requests fail as not_configured: the paid one is refunded once, the free ones move no money, nothing is called', async () => {
    const userId = newUser();
    stack.clock.set('2031-03-10T10:00:00Z');
    const free = [
      await postOk(userId, { kind: 'music', durationSeconds: 10, input: { n: 1 } }),
      await postOk(userId, { kind: 'music', durationSeconds: 10, input: { n: 2 } }),
    ];
    await grant(userId, 5);
    const paid = await postOk(userId, { kind: 'music', durationSeconds: 10, input: { n: 3 } });
    expect([...free, paid].map((r) => [r.freeTier, r.tokensCharged])).toEqual([
      [true, 0],
      [true, 0],
      [false, 5],
    ]);
    stack.startWorker({ roles: ['studio'], studio: { aiStudio: undefined } });
    const views = await eventually('all three requests to fail', async () => {
      const all = await Promise.all([...free, paid].map((r) => getRequest(userId, r.id)));
      return all.every((v) => v.status === 'failed') ? all : undefined;
    });
    const notConfigured = {
      code: 'not_configured',
      message: expect.stringContaining('the AI service (AI_STUDIO_BASE_URL) is not configured'),
    };
    expect(views).toEqual([
      expect.objectContaining({ id: free[0]?.id, refunded: false, attempts: 1, error: notConfigured }),
      expect.objectContaining({ id: free[1]?.id, refunded: false, attempts: 1, error: notConfigured }),
      expect.objectContaining({ id: paid.id, refunded: true, attempts: 1, result: null, error: notConfigured }),
    ]);
    for (const r of [...free, paid]) expect(ai.callsFor(r.id)).toHaveLength(0);
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount])).toEqual([
      [`test:grant:${userId}:5`, 5],
      [references.studioDebit(paid.id), -5],
      [references.studioRefund(paid.id), 5],
    ]);
    await expectLedgerExplainsBalance(userId);
    expect(await balanceOf(userId)).toBe(5);
  });

  it('running the refund twice (and failing twice at once) still refunds once', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    // No studio worker: the test plays the worker.
    const created = await postOk(userId, { kind: 'music', durationSeconds: 5, input: {} });
    const { id } = await row(created.id);
    expect(await claimStudioRequest(stack.db, id)).toMatchObject({ status: 'processing', attempts: 1 });

    const failure = { code: 'ai_failed', message: 'boom' };
    const outcomes = await Promise.all([
      failStudioRequest(stack.outboxDeps(), id, failure),
      failStudioRequest(stack.outboxDeps(), id, failure),
      failStudioRequest(stack.outboxDeps(), id, failure),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['already-settled', 'already-settled', 'failed']);
    const again = await stack.transaction(async (uow) => [
      await refundStudioRequest(uow, { id, publicId: created.id }),
      await refundStudioRequest(uow, { id, publicId: created.id }),
    ]);
    expect(again.map((r) => r.kind)).toEqual(['already-refunded', 'already-refunded']);

    const refunds = (await ledgerOf(stack.db, userId)).filter(
      (e) => e.reference === references.studioRefund(created.id),
    );
    expect(refunds).toHaveLength(1);
    expect(await balanceOf(userId)).toBe(5);
    expect(await row(created.id)).toMatchObject({ status: 'failed', error_code: 'ai_failed' });
    await expectLedgerExplainsBalance(userId);
  });

  it('a free request that fails is not refunded (nothing was debited)', async () => {
    const userId = newUser();
    const created = await postOk(userId, { kind: 'image_edit', input: {} });
    const { id } = await row(created.id);
    await claimStudioRequest(stack.db, id);
    expect(await failStudioRequest(stack.outboxDeps(), id, { code: 'ai_failed', message: 'x' })).toMatchObject({
      kind: 'failed',
      refund: 'no-debit',
    });
    expect(await ledgerOf(stack.db, userId)).toEqual([]);
    expect((await row(created.id)).refunded_at).toBeNull();
  });

  it('a worker killed after the debit and before the AI call: the sweeper refunds exactly once, and the relay never runs it again', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    const created = await postOk(userId, { kind: 'music', durationSeconds: 5, input: { prompt: 'doomed' } });
    const { id } = await row(created.id);
    // The dying worker: claimed (received → processing) and killed before calling the AI service.
    await claimStudioRequest(stack.db, id);

    const worker = stack.startWorker({
      roles: ['studio', 'relay', 'studio-sweeper'],
      relay: { intervalMs: 60_000, staleAfterMs: 100, processingStaleAfterMs: 100, batchSize: 100 },
      studio: { sweeper: { intervalMs: 60_000, stuckAfterMs: 300, batchSize: 100 } },
    });
    await sleep(400);
    // The relay leaves a processing studio request alone: running it again could generate twice.
    await worker.loops.relay?.runOnce();
    await Promise.all([
      worker.loops['studio-sweeper']?.runOnce(),
      sweepStuckStudioRequests(stack.outboxDeps(), { stuckAfterMs: 300, batchSize: 10 }),
    ]);
    await worker.loops['studio-sweeper']?.runOnce();

    expect(await getRequest(userId, created.id)).toMatchObject({
      status: 'failed',
      refunded: true,
      result: null,
      error: { code: 'stuck' },
    });
    await sleep(200);
    expect(ai.callsFor(created.id)).toHaveLength(0);
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount])).toEqual([
      [`test:grant:${userId}:5`, 5],
      [references.studioDebit(created.id), -5],
      [references.studioRefund(created.id), 5],
    ]);
    expect(await balanceOf(userId)).toBe(5);
  });

  it('a late AI success after the sweep does not leave the request both refunded and charged', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    const created = await postOk(userId, { kind: 'music', durationSeconds: 5, input: { fake: 'slow', delayMs: 700 } });
    const { id } = await row(created.id);

    const processing = processStudioRequest(
      {
        ...stack.outboxDeps(),
        aiStudio: stack.ports.aiStudio,
        maxAttempts: defaultWorkerSettings.studio.maxAttempts,
        backoff: defaultWorkerSettings.studio.backoff,
      },
      id,
    );
    await eventually('the AI call to start', async () => ai.callsFor(created.id).length === 1);
    await sleep(250);
    const swept = await sweepStuckStudioRequests(stack.outboxDeps(), { stuckAfterMs: 200, batchSize: 10 });
    expect(swept).toEqual([{ id, publicId: created.id, refund: 'refunded' }]);

    // The AI answers after the sweep: its completion loses, the result is discarded.
    const outcome = await processing;
    expect(outcome).toMatchObject({ kind: 'discarded', status: 'failed' });
    expect(ai.callsFor(created.id)[0]?.answeredWith).toBe(200);
    expect(await getRequest(userId, created.id)).toMatchObject({
      status: 'failed',
      refunded: true,
      result: null,
      completedAt: null,
      error: { code: 'stuck' },
    });
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount])).toEqual([
      [`test:grant:${userId}:5`, 5],
      [references.studioDebit(created.id), -5],
      [references.studioRefund(created.id), 5],
    ]);
    expect(await balanceOf(userId)).toBe(5);
  });

  it('retries only an AI service it never reached, then fails and refunds once', async () => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, 5);
    const created = await postOk(userId, { kind: 'music', durationSeconds: 5, input: {} });
    const { id } = await row(created.id);
    // A loopback port nobody listens on: connection refused, nothing was sent.
    const closedPort = await freePort();
    const unreachable = createAiStudioClient({
      baseUrl: `http://127.0.0.1:${closedPort}`,
      apiKey: 'k',
      timeoutMs: 1_000,
    });
    const deps = {
      ...stack.outboxDeps(),
      aiStudio: unreachable,
      maxAttempts: 2,
      backoff: { baseDelayMs: 10, maxDelayMs: 10 },
    };

    const first = await processStudioRequest(deps, id);
    expect(first).toMatchObject({ kind: 'retry', code: 'ai_unreachable' });
    expect(await row(created.id)).toMatchObject({ status: 'received', attempts: 1, error_code: 'ai_unreachable' });
    const second = await processStudioRequest(deps, id);
    expect(second).toMatchObject({ kind: 'failed', code: 'ai_unreachable', refund: 'refunded' });
    expect(
      (await ledgerOf(stack.db, userId)).filter((e) => e.reference.startsWith('studio:')).map((e) => e.amount),
    ).toEqual([-5, 5]);
  });

  it('completes a paid request with the AI result, keeps the debit, and the ledger explains the balance', async () => {
    const userId = newUser();
    await grant(userId, 30);
    stack.clock.set('2031-03-09T09:00:00Z');
    stack.startWorker({ roles: ['studio'] });
    await spendFreeMusic(userId);
    const paid = await postOk(userId, { kind: 'music', full: true, input: { prompt: 'anthem' } });
    const failed = await postOk(userId, { kind: 'music', durationSeconds: 30, input: { fake: 'fail' } });
    const done = await eventually('both paid requests to settle', async () => {
      const views = await Promise.all([getRequest(userId, paid.id), getRequest(userId, failed.id)]);
      return views.every((v) => v.status === 'completed' || v.status === 'failed') ? views : undefined;
    });
    expect(done[0]).toMatchObject({
      status: 'completed',
      tokensCharged: 15,
      refunded: false,
      error: null,
      result: { generationId: `gen-${paid.id}`, kind: 'music', url: `https://cdn.example/${paid.id}` },
    });
    expect(done[1]).toMatchObject({ status: 'failed', tokensCharged: 5, refunded: true });
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount, e.reason])).toEqual([
      [`test:grant:${userId}:30`, 30, 'test_grant'],
      [references.studioDebit(paid.id), -15, 'studio_music_full'],
      [references.studioDebit(failed.id), -5, 'studio_music_clip'],
      [references.studioRefund(failed.id), 5, 'studio_refund'],
    ]);
    expect(await balanceOf(userId)).toBe(15);
    await expectLedgerExplainsBalance(userId);
    const ledgerApi = await readJson(await stack.apiRequest(`/v1/users/${userId}/ledger`));
    expect(ledgerApi.entries[0]).toMatchObject({ reference: references.studioRefund(failed.id), balanceAfter: 15 });
  });

  it('a request whose hand-off to the queue failed is picked up by the relay and generated', async () => {
    const userId = newUser();
    const created = await createStudioRequest(
      { ...stack.outboxDeps(), catalog: stack.catalog, clock: stack.clock, spendLimits: stack.spendLimits },
      { userId, kind: 'image_edit', input: { prompt: 'relay me' } },
    );
    if (created.kind !== 'created') throw new Error('expected a created request');
    // What the API does when Redis refuses the job: release the row for the relay.
    await studioRelaySource.releaseHandOff(stack.db, [created.request.id]);
    const worker = stack.startWorker({ roles: ['studio', 'relay'] });
    await worker.loops.relay?.runOnce();
    await eventually('the relayed request to complete', async () => {
      const v = await getRequest(userId, created.request.public_id);
      return v.status === 'completed' ? v : undefined;
    });
    expect(ai.callsFor(created.request.public_id)).toHaveLength(1);
  });

  it("lists a user's requests newest first in pages, shows one, and hides other users' requests", async () => {
    const userId = newUser();
    const otherUser = newUser();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push((await postOk(userId, { kind: 'image_edit', input: { n: i } })).id);
      // Another user's requests in between: they never show up in this user's pages.
      await postOk(otherUser, { kind: 'image_edit', input: { n: i } });
    }
    const list = async (query: string) => {
      const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests${query}`);
      return { status: response.status, body: await readJson(response) };
    };

    const pages: Json[] = [];
    let query = '?limit=2';
    for (;;) {
      const page = await list(query);
      expect(page.status).toBe(200);
      pages.push(page.body);
      if (page.body.nextCursor === null) break;
      query = `?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`;
    }
    expect(pages.map((page) => page.requests.map((r: Json) => r.id))).toEqual([
      [ids[4], ids[3]],
      [ids[2], ids[1]],
      [ids[0]],
    ]);
    // The cursor is the public id of the page's last request, never the internal id.
    expect(pages.map((page) => page.nextCursor)).toEqual([ids[3], ids[1], null]);
    const internal = await row(ids[3] as string);
    expect((await list(`?limit=2&cursor=${internal.id}`)).status).toBe(400);
    // Not a cursor of this user's: unknown, another user's request, malformed.
    const otherUsers = await readJson(await stack.apiRequest(`/v1/users/${otherUser}/studio/requests?limit=1`));
    for (const bad of ['00000000-0000-4000-8000-000000000000', otherUsers.requests[0].id, 'nope']) {
      expect(await list(`?limit=2&cursor=${bad}`)).toEqual({
        status: 400,
        body: {
          error: { code: 'invalid_request', message: "cursor: not a nextCursor from this user's studio requests" },
        },
      });
    }

    expect(await getRequest(userId, ids[0] as string)).toMatchObject({ id: ids[0], userId, input: { n: 0 } });
    expect((await stack.apiRequest(`/v1/users/someone-else/studio/requests/${ids[0]}`)).status).toBe(404);
    expect((await stack.apiRequest(`/v1/users/${userId}/studio/requests/not-a-uuid`)).status).toBe(404);
  });

  it('refuses malformed requests with 400 and writes nothing', async () => {
    const userId = newUser();
    const bad = [
      { kind: 'video', input: {} },
      { kind: 'image_edit' },
      { kind: 'music', input: {} },
      { kind: 'music', durationSeconds: 31, input: {} },
      { kind: 'music', durationSeconds: 2.5, input: {} },
      { kind: 'image_edit', full: true, input: {} },
      { kind: 'image_edit', input: {}, extra: 1 },
    ];
    for (const body of bad) {
      const response = await post(userId, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect((await readJson(response)).error.code).toBe('invalid_request');
    }
    expect(await stack.db.selectFrom('studio_requests').select('id').where('user_id', '=', userId).execute()).toEqual(
      [],
    );
  });
});
