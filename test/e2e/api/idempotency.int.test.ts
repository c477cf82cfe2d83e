import {
  claimIdempotencyKey,
  fingerprintRequestBody,
  lockStudioUser,
  STUDIO_LOCK_NAMESPACE,
} from '@tally/billing-core';
import { sql } from 'kysely';
import { idempotencyOutcomes } from '../../../apps/api/src/api-metrics';
import { eventually, type Json, readJson } from '../../support/stack';
import { suiteStackWithFakeStripe } from '../../support/suite';

/** The api's Stripe client gives up after this; the fake stalls longer once to play a lost answer. */
const STRIPE_TIMEOUT_MS = 3_000;

describe('Idempotency-Key: a retried POST under /v1 never charges or creates twice', () => {
  let seq = 0;

  const { stack, fake } = suiteStackWithFakeStripe({ stripeTimeoutMs: STRIPE_TIMEOUT_MS });
  afterEach(() => stack.stopWorkers());

  const newUser = () => `idem-user-${++seq}-${Date.now().toString(36)}`;
  const newKey = () => `key-${++seq}-${Math.random().toString(36).slice(2)}`;

  const grant = (userId: string, amount: number) =>
    stack.postPlainEntry({ userId, reference: `test:grant:${userId}:${amount}`, amount, reason: 'test_grant' });

  const studioPath = (userId: string) => `/v1/users/${userId}/studio/requests`;
  const fullSong = { kind: 'music', durationSeconds: 120, full: true, input: { prompt: 'a song' } };

  const post = (path: string, body: unknown, key?: string) =>
    stack.apiRequest(path, {
      method: 'POST',
      body,
      ...(key === undefined ? {} : { headers: { 'Idempotency-Key': key } }),
    });

  /** An answer as the app sees it: status, the replay header, and the JSON body. */
  const answerOf = async (response: Response) => ({
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    body: (await readJson(response)) as Json,
  });

  /** Uses up the day's free music allowance (two clips, no key), so the next music request is paid. */
  const spendFreeMusic = async (userId: string) => {
    for (let i = 0; i < 2; i += 1) {
      const free = await post(studioPath(userId), { kind: 'music', durationSeconds: 10, input: { i } });
      expect(await answerOf(free)).toMatchObject({ status: 202, body: { freeTier: true } });
    }
  };

  /** A user whose next full song (15 tokens) is paid, with `balance` tokens. */
  const payingUser = async (balance: number) => {
    const userId = newUser();
    await spendFreeMusic(userId);
    await grant(userId, balance);
    return userId;
  };

  const studioState = async (userId: string) => ({
    requests: await stack.db
      .selectFrom('studio_requests')
      .select(['public_id', 'tokens_charged', 'free_tier'])
      .where('user_id', '=', userId)
      .where('free_tier', '=', false)
      .orderBy('id')
      .execute(),
    debits: await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'balance_after'])
      .where('user_id', '=', userId)
      .where('amount', '<', 0)
      .orderBy('id')
      .execute(),
    balance: (await stack.db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst())
      ?.balance,
  });

  const keyRows = (userId: string) =>
    stack.db
      .selectFrom('idempotency_keys')
      .select([
        'idempotency_key',
        'request_method',
        'request_path',
        'recovery_point',
        'topup_reference',
        'locked_at',
        'response_status',
        'response_body',
      ])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();

  /** tally_idempotency_requests_total by outcome, scraped from the api's /metrics. */
  const idempotencyCounts = async () => {
    const text = await (await fetch(`http://127.0.0.1:${stack.api.port}/metrics`)).text();
    const counts: Record<string, number> = {};
    for (const outcome of idempotencyOutcomes) {
      const line = text
        .split('\n')
        .find((l) => l.startsWith('tally_idempotency_requests_total{') && l.includes(`outcome="${outcome}"`));
      counts[outcome] = Number(line?.split(' ').pop());
    }
    return counts;
  };

  const countsMoved = (before: Record<string, number>, after: Record<string, number>) =>
    Object.fromEntries(idempotencyOutcomes.map((outcome) => [outcome, (after[outcome] ?? 0) - (before[outcome] ?? 0)]));

  it('a retried studio request is charged once and answered the same, status and body, marked Idempotent-Replayed', async () => {
    const userId = await payingUser(40);
    const key = newKey();
    const before = await idempotencyCounts();

    const first = await answerOf(await post(studioPath(userId), fullSong, key));
    expect(first).toEqual({
      status: 202,
      replayed: null,
      body: { id: expect.any(String), status: 'received', tokensCharged: 15, freeTier: false },
    });
    // The same JSON with its keys in another order is the same body.
    const reordered = { input: { prompt: 'a song' }, full: true, durationSeconds: 120, kind: 'music' };
    const retries = [
      await answerOf(await post(studioPath(userId), fullSong, key)),
      await answerOf(await post(studioPath(userId), reordered, key)),
    ];
    expect(retries).toEqual([
      { ...first, replayed: 'true' },
      { ...first, replayed: 'true' },
    ]);

    expect(await studioState(userId)).toEqual({
      requests: [{ public_id: first.body.id, tokens_charged: 15, free_tier: false }],
      debits: [{ reference: `studio:${first.body.id}:debit`, amount: -15, balance_after: 25 }],
      balance: 25,
    });
    expect(await keyRows(userId)).toEqual([
      {
        idempotency_key: key,
        request_method: 'POST',
        request_path: studioPath(userId),
        recovery_point: 'finished',
        topup_reference: null,
        locked_at: null,
        response_status: 202,
        response_body: JSON.stringify(first.body),
      },
    ]);
    expect(countsMoved(before, await idempotencyCounts())).toEqual({
      executed: 1,
      replayed: 2,
      conflict: 0,
      in_use: 0,
    });
  });

  it('another body, path or method under a used key is 422 idempotency_key_reused and charges nothing', async () => {
    const userId = await payingUser(40);
    const key = newKey();
    const first = await answerOf(await post(studioPath(userId), fullSong, key));
    expect(first.status).toBe(202);
    const stateAfterFirst = await studioState(userId);
    const before = await idempotencyCounts();

    const reused = [
      // Another body: a shorter song, then the same song with other input.
      await answerOf(await post(studioPath(userId), { ...fullSong, durationSeconds: 60 }, key)),
      await answerOf(await post(studioPath(userId), { ...fullSong, input: { prompt: 'another song' } }, key)),
      // Another path under the same key.
      await answerOf(await post(`/v1/users/${userId}/topups`, { packId: 'tokens_100' }, key)),
    ];
    for (const answer of reused) {
      expect(answer).toEqual({
        status: 422,
        replayed: null,
        body: { error: { code: 'idempotency_key_reused', message: expect.stringContaining('another request') } },
      });
    }
    expect(await studioState(userId)).toEqual(stateAfterFirst);
    expect(await stack.db.selectFrom('topups').select('reference').where('user_id', '=', userId).execute()).toEqual([]);
    expect(await keyRows(userId)).toEqual([expect.objectContaining({ idempotency_key: key, response_status: 202 })]);
    // A GET is never keyed: the header changes nothing on it.
    const read = await stack.apiRequest(`/v1/users/${userId}/wallet`, { headers: { 'Idempotency-Key': key } });
    expect(await answerOf(read)).toEqual({
      status: 200,
      replayed: null,
      body: {
        userId,
        balance: 25,
        held: 0,
        available: 25,
        debt: 0,
        lots: [expect.objectContaining({ amount: 40, remaining: 25, expiresAt: null })],
      },
    });
    expect(countsMoved(before, await idempotencyCounts())).toEqual({
      executed: 0,
      replayed: 0,
      conflict: 3,
      in_use: 0,
    });
  });

  /** Transactions of this test database waiting for a studio user lock (the one createStudioRequest takes). */
  const studioLockWaiters = async () => {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting
        FROM pg_locks l JOIN pg_database d ON d.oid = l.database
       WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted
         AND l.classid = ${STUDIO_LOCK_NAMESPACE}`.execute(stack.db);
    return rows[0]?.waiting ?? 0;
  };

  it('ten concurrent requests with one key while the first is inside its transaction: one request and one debit, nine 409 idempotency_key_in_use', async () => {
    const userId = await payingUser(150);
    const key = newKey();
    const before = await idempotencyCounts();
    // The test holds the user's studio lock: the attempt that claimed the key waits inside its
    // transaction while the other nine arrive.
    const holder = await stack.db.startTransaction().execute();
    let released = false;
    try {
      await lockStudioUser(holder, userId);
      const settled: Array<{ status: number; replayed: string | null; body: Json }> = [];
      const racing = Array.from({ length: 10 }, () =>
        post(studioPath(userId), fullSong, key)
          .then(answerOf)
          .then((answer) => {
            settled.push(answer);
            return answer;
          }),
      );
      await eventually('nine answers while one attempt waits on the studio lock', async () => {
        return settled.length === 9 && (await studioLockWaiters()) === 1;
      });
      expect(settled).toEqual(
        Array.from({ length: 9 }, () => ({
          status: 409,
          replayed: null,
          body: { error: { code: 'idempotency_key_in_use', message: expect.any(String) } },
        })),
      );
      await holder.commit().execute();
      released = true;
      const answers = await Promise.all(racing);
      const created = answers.filter((answer) => answer.status === 202);
      expect(created).toEqual([
        { status: 202, replayed: null, body: expect.objectContaining({ tokensCharged: 15, freeTier: false }) },
      ]);
      const [executed] = created;
      // The nine retry later and get the first answer.
      expect(await answerOf(await post(studioPath(userId), fullSong, key))).toEqual({ ...executed, replayed: 'true' });
      expect(await studioState(userId)).toEqual({
        requests: [{ public_id: executed?.body.id, tokens_charged: 15, free_tier: false }],
        debits: [{ reference: `studio:${executed?.body.id}:debit`, amount: -15, balance_after: 135 }],
        balance: 135,
      });
      expect(countsMoved(before, await idempotencyCounts())).toEqual({
        executed: 1,
        replayed: 1,
        conflict: 0,
        in_use: 9,
      });
    } finally {
      if (!released) await holder.rollback().execute();
    }
  });

  it('ten requests with one key sent at the same instant: one request and one debit, the rest 409 or the same answer', async () => {
    const userId = await payingUser(150);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(studioPath(userId), fullSong, key).then(answerOf)),
    );
    const executed = answers.filter((answer) => answer.status === 202 && answer.replayed === null);
    expect(executed).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) expect(answer.body.error.code).toBe('idempotency_key_in_use');
      else expect(answer).toEqual({ ...executed[0], replayed: answer.replayed });
    }
    const state = await studioState(userId);
    expect(state).toEqual({
      requests: [{ public_id: executed[0]?.body.id, tokens_charged: 15, free_tier: false }],
      debits: [{ reference: `studio:${executed[0]?.body.id}:debit`, amount: -15, balance_after: 135 }],
      balance: 135,
    });
  });

  it("the unique (user, key) is the fence: a key that another attempt committed after this one's check answers, and this one rolls back its request and debit", async () => {
    const userId = await payingUser(40);
    const key = newKey();
    // The attempt passes its key check (no key yet, nobody holds it) and then waits on the
    // studio lock the test holds, in the same first statement of its transaction.
    const holder = await stack.db.startTransaction().execute();
    let released = false;
    try {
      await lockStudioUser(holder, userId);
      const racing = post(studioPath(userId), fullSong, key).then(answerOf);
      await eventually('the attempt to wait on the studio lock, past its key check', async () => {
        return (await studioLockWaiters()) === 1;
      });
      // Meanwhile another attempt of the same request commits the key without the try-lock the
      // check takes (what an api of the claim-first version does during a rolling deploy).
      const other = {
        id: '00000000-0000-4000-8000-000000000000',
        status: 'received',
        tokensCharged: 15,
        freeTier: false,
      };
      await stack.db
        .insertInto('idempotency_keys')
        .values({
          user_id: userId,
          idempotency_key: key,
          request_method: 'POST',
          request_path: studioPath(userId),
          request_hash: fingerprintRequestBody(fullSong),
          recovery_point: 'finished',
          response_status: 202,
          response_body: JSON.stringify(other),
          finished_at: sql`now()`,
        })
        .execute();
      const stateBefore = await studioState(userId);
      await holder.commit().execute();
      released = true;
      // The attempt's insert of its key meets the committed one: it answers that key's answer.
      expect(await racing).toEqual({ status: 202, replayed: 'true', body: other });
      expect(await studioState(userId)).toEqual(stateBefore);
      expect(stateBefore).toEqual({ requests: [], debits: [], balance: 40 });
    } finally {
      if (!released) await holder.rollback().execute();
    }
  });

  it('keys are per user: two users with one key each get their own request and charge', async () => {
    const [alice, bob] = [await payingUser(20), await payingUser(20)];
    const key = newKey();
    const forAlice = await answerOf(await post(studioPath(alice), fullSong, key));
    const forBob = await answerOf(await post(studioPath(bob), fullSong, key));
    expect([forAlice.status, forAlice.replayed, forBob.status, forBob.replayed]).toEqual([202, null, 202, null]);
    expect(forBob.body.id).not.toBe(forAlice.body.id);
    for (const [userId, answer] of [
      [alice, forAlice],
      [bob, forBob],
    ] as const) {
      expect(await studioState(userId)).toEqual({
        requests: [{ public_id: answer.body.id, tokens_charged: 15, free_tier: false }],
        debits: [{ reference: `studio:${answer.body.id}:debit`, amount: -15, balance_after: 5 }],
        balance: 5,
      });
    }
  });

  it('a link made between a studio POST and its retry does not make the retry a new key: it is replayed, charged once', async () => {
    const [linked, canonical] = [await payingUser(40), await payingUser(40)];
    const key = newKey();
    const first = await answerOf(await post(studioPath(linked), fullSong, key));
    expect(first).toMatchObject({ status: 202, replayed: null, body: { tokensCharged: 15 } });
    // RevenueCat links the id to another user before the app's retry arrives.
    await stack.db.insertInto('user_aliases').values({ alias: linked, user_id: canonical }).execute();
    const retried = await answerOf(await post(studioPath(linked), fullSong, key));
    expect(retried).toEqual({ ...first, replayed: 'true' });
    expect(await studioState(linked)).toEqual({
      requests: [{ public_id: first.body.id, tokens_charged: 15, free_tier: false }],
      debits: [{ reference: `studio:${first.body.id}:debit`, amount: -15, balance_after: 25 }],
      balance: 25,
    });
    expect(await studioState(canonical)).toEqual({ requests: [], debits: [], balance: 40 });
    expect(await keyRows(linked)).toEqual([
      expect.objectContaining({ idempotency_key: key, request_path: studioPath(linked), response_status: 202 }),
    ]);
    expect(await keyRows(canonical)).toEqual([]);
  });

  it("keys are per id as the path names it: the same key through a linked id is that id's own key, a new action", async () => {
    const userId = await payingUser(40);
    const alias = `$RCAnonymousID:${newUser()}`;
    await stack.db.insertInto('user_aliases').values({ alias, user_id: userId }).execute();
    const key = newKey();
    const first = await answerOf(await post(studioPath(userId), fullSong, key));
    const viaAlias = await answerOf(await post(studioPath(encodeURIComponent(alias)), fullSong, key));
    expect([first.status, first.replayed, viaAlias.status, viaAlias.replayed]).toEqual([202, null, 202, null]);
    expect(viaAlias.body.id).not.toBe(first.body.id);
    // Both are the canonical user's requests and debits; each id keeps its own key.
    expect((await studioState(userId)).requests.map((request) => request.public_id)).toEqual([
      first.body.id,
      viaAlias.body.id,
    ]);
    expect((await keyRows(userId)).map((row) => row.request_path)).toEqual([studioPath(userId)]);
    expect((await keyRows(alias)).map((row) => row.request_path)).toEqual([studioPath(encodeURIComponent(alias))]);
  });

  it('a POST without the key behaves as it always did: each one is a new request and charge, no key is kept', async () => {
    const userId = await payingUser(40);
    const answers = [
      await answerOf(await post(studioPath(userId), fullSong)),
      await answerOf(await post(studioPath(userId), fullSong)),
    ];
    expect(answers.map((answer) => [answer.status, answer.replayed])).toEqual([
      [202, null],
      [202, null],
    ]);
    expect(answers[0]?.body.id).not.toBe(answers[1]?.body.id);
    const state = await studioState(userId);
    expect(state.requests).toHaveLength(2);
    expect(state.debits.map((debit) => debit.amount)).toEqual([-15, -15]);
    expect(state.balance).toBe(10);
    expect(await keyRows(userId)).toEqual([]);
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a space', 'my key'],
    ['with a character outside ASCII', 'clé'],
  ])('a key that is %s is 400 invalid_idempotency_key, and nothing runs', async (_what, key) => {
    const userId = await payingUser(40);
    const stateBefore = await studioState(userId);
    const answer = await answerOf(await post(studioPath(userId), fullSong, key));
    expect(answer).toEqual({
      status: 400,
      replayed: null,
      body: { error: { code: 'invalid_idempotency_key', message: expect.stringContaining('1 to 255 visible ASCII') } },
    });
    expect(await studioState(userId)).toEqual(stateBefore);
    expect(await keyRows(userId)).toEqual([]);
  });

  it('a 402 (balance short) is the final answer under its key, as every answer below 500 but a retryable one is', async () => {
    const userId = await payingUser(3);
    const key = newKey();
    const short = await answerOf(await post(studioPath(userId), fullSong, key));
    expect(short).toMatchObject({
      status: 402,
      body: { error: { code: 'insufficient_balance' }, balance: 3, price: 15 },
    });
    await grant(userId, 20);
    // Same key: the app's retry of that one action gets the same answer, even though it would pay now.
    expect(await answerOf(await post(studioPath(userId), fullSong, key))).toEqual({ ...short, replayed: 'true' });
    expect((await studioState(userId)).requests).toEqual([]);
  });

  it('a studio key claimed by an attempt that died before committing is 409 while its lease runs, then its retry runs it once', async () => {
    const userId = await payingUser(40);
    const key = newKey();
    // A studio POST claims nothing before its transaction, so a studio attempt that dies leaves
    // no key (idempotency-crash plays it with a real process). A claimed, unfinished key under a
    // studio path is what an api of the claim-first version leaves when it dies mid-request
    // (during a rolling deploy): a started key with a running lease, taken over once it expired.
    const died = await claimIdempotencyKey(
      stack.db,
      { userId, key, method: 'POST', path: studioPath(userId), requestHash: fingerprintRequestBody(fullSong) },
      { lockTimeoutMs: 60_000 },
    );
    expect(died.kind).toBe('execute');
    expect(await answerOf(await post(studioPath(userId), fullSong, key))).toMatchObject({
      status: 409,
      body: { error: { code: 'idempotency_key_in_use' } },
    });
    expect((await studioState(userId)).requests).toEqual([]);
    // The lease runs out (aged by the database clock instead of waiting a minute).
    await stack.db
      .updateTable('idempotency_keys')
      .set({ locked_at: sql`now() - interval '61 seconds'` })
      .where('user_id', '=', userId)
      .execute();
    const resumed = await answerOf(await post(studioPath(userId), fullSong, key));
    expect(resumed).toMatchObject({ status: 202, replayed: null, body: { tokensCharged: 15 } });
    expect(await answerOf(await post(studioPath(userId), fullSong, key))).toEqual({ ...resumed, replayed: 'true' });
    expect(await studioState(userId)).toEqual({
      requests: [{ public_id: resumed.body.id, tokens_charged: 15, free_tier: false }],
      debits: [{ reference: `studio:${resumed.body.id}:debit`, amount: -15, balance_after: 25 }],
      balance: 25,
    });
  });

  it('a key older than IDEMPOTENCY_KEY_TTL_HOURS is pruned by the retention role, and then runs afresh', async () => {
    const userId = await payingUser(50);
    const [oldKey, recentKey] = [newKey(), newKey()];
    const first = await answerOf(await post(studioPath(userId), fullSong, oldKey));
    expect(first.status).toBe(202);
    expect((await answerOf(await post(studioPath(userId), fullSong, recentKey))).status).toBe(202);
    await stack.db
      .updateTable('idempotency_keys')
      .set({ created_at: sql`now() - interval '25 hours'` })
      .where('user_id', '=', userId)
      .where('idempotency_key', '=', oldKey)
      .execute();
    // Kept before the retention runs.
    expect((await answerOf(await post(studioPath(userId), fullSong, oldKey))).replayed).toBe('true');

    const worker = stack.startWorker({
      roles: ['retention'],
      retention: { intervalMs: 60_000, retentionDays: 90, idempotencyKeyTtlHours: 24 },
    });
    await worker.loops.retention?.runOnce();
    expect((await keyRows(userId)).map((row) => row.idempotency_key)).toEqual([recentKey]);

    const afresh = await answerOf(await post(studioPath(userId), fullSong, oldKey));
    expect(afresh).toMatchObject({ status: 202, replayed: null, body: { tokensCharged: 15 } });
    expect(afresh.body.id).not.toBe(first.body.id);
    const state = await studioState(userId);
    expect(state.requests.map((request) => request.public_id)).toEqual([
      first.body.id,
      expect.any(String),
      afresh.body.id,
    ]);
    expect(state.balance).toBe(50 - 3 * 15);
  });

  describe('top-ups: the key records how far the create got, and a retry resumes there', () => {
    const intentsOf = (reference: string) =>
      [...fake.paymentIntents.values()].filter(
        (intent) => (intent.metadata as Record<string, string>).topup_reference === reference,
      );
    const createsOf = (reference: string) =>
      fake.requests.filter(
        (request) =>
          request.method === 'POST' &&
          request.path === '/v1/payment_intents' &&
          request.form['metadata[topup_reference]'] === reference,
      );

    it('a top-up retried after the Stripe call timed out makes one recharge and one PaymentIntent', async () => {
      const userId = newUser();
      const key = newKey();
      const path = `/v1/users/${userId}/topups`;
      const createsBefore = fake.requests.length;
      // Stripe takes longer than the api's Stripe timeout to answer the create, then creates the
      // intent anyway: the answer never reaches Tally.
      fake.stallNextMs = STRIPE_TIMEOUT_MS + 2_000;
      const lost = post(path, { packId: 'tokens_100' }, key).then(answerOf);
      await eventually('the create to reach Stripe', async () =>
        fake.requests.slice(createsBefore).some((request) => request.path === '/v1/payment_intents'),
      );
      // While the first attempt waits on Stripe, a retry is refused, not run beside it.
      expect(await answerOf(await post(path, { packId: 'tokens_100' }, key))).toMatchObject({
        status: 409,
        body: { error: { code: 'idempotency_key_in_use' } },
      });
      expect(await lost).toMatchObject({ status: 502, body: { error: { code: 'stripe_unavailable' } } });

      const [row] = await keyRows(userId);
      const reference = String(row?.topup_reference);
      expect(row).toMatchObject({ recovery_point: 'recharge_created', locked_at: null, response_status: null });
      await eventually('Stripe to create the intent after the timeout', async () => intentsOf(reference).length === 1);

      const resumed = await answerOf(await post(path, { packId: 'tokens_100' }, key));
      const [intent] = intentsOf(reference);
      expect(resumed).toEqual({
        status: 201,
        replayed: null,
        body: { reference, clientSecret: intent?.client_secret, status: 'pending' },
      });
      expect(await answerOf(await post(path, { packId: 'tokens_100' }, key))).toEqual({ ...resumed, replayed: 'true' });

      expect(
        await stack.db
          .selectFrom('topups')
          .select(['reference', 'status', 'payment_intent_id'])
          .where('user_id', '=', userId)
          .execute(),
      ).toEqual([{ reference, status: 'pending', payment_intent_id: intent?.id }]);
      expect(intentsOf(reference)).toHaveLength(1);
      // Both creates carried the top-up's own Stripe idempotency key; the replay asked Stripe nothing.
      expect(createsOf(reference).map((request) => request.idempotencyKey)).toEqual([
        `topup-${reference}`,
        `topup-${reference}`,
      ]);
      expect(await keyRows(userId)).toEqual([
        expect.objectContaining({
          recovery_point: 'finished',
          topup_reference: reference,
          response_status: 201,
          response_body: JSON.stringify(resumed.body),
        }),
      ]);
    });

    it('an attempt whose lease was taken over cannot finish the key: it answers 409, the retry that took over answers, one PaymentIntent', async () => {
      const userId = newUser();
      const key = newKey();
      const path = `/v1/users/${userId}/topups`;
      const requestsBefore = fake.requests.length;
      // The first attempt waits on Stripe (slow, but within the client's timeout)...
      fake.stallNextMs = 1_500;
      const slow = post(path, { packId: 'tokens_100' }, key).then(answerOf);
      await eventually('the first create to reach Stripe', async () =>
        fake.requests.slice(requestsBefore).some((request) => request.path === '/v1/payment_intents'),
      );
      // ...long enough for its lease to run out (aged by the database clock): a retry takes over.
      await stack.db
        .updateTable('idempotency_keys')
        .set({ locked_at: sql`now() - interval '1 hour'` })
        .where('user_id', '=', userId)
        .execute();
      const retry = await answerOf(await post(path, { packId: 'tokens_100' }, key));
      expect(retry).toMatchObject({ status: 201, replayed: null, body: { status: 'pending' } });
      expect(await slow).toEqual({
        status: 409,
        replayed: null,
        body: { error: { code: 'idempotency_key_in_use', message: expect.any(String) } },
      });
      expect(await answerOf(await post(path, { packId: 'tokens_100' }, key))).toEqual({ ...retry, replayed: 'true' });
      const { reference } = retry.body;
      expect(intentsOf(reference)).toHaveLength(1);
      expect(
        await stack.db
          .selectFrom('topups')
          .select(['reference', 'payment_intent_id'])
          .where('user_id', '=', userId)
          .execute(),
      ).toEqual([{ reference, payment_intent_id: intentsOf(reference)[0]?.id }]);
    });

    it('a 5xx is not kept under the key: the confirm retried after Stripe failed runs again and credits once', async () => {
      const userId = newUser();
      const created = await answerOf(await post(`/v1/users/${userId}/topups`, { packId: 'tokens_100' }, newKey()));
      const { reference } = created.body;
      const [intent] = intentsOf(reference);
      fake.setPaymentIntentStatus(String(intent?.id), 'succeeded');
      fake.failNext(503, { pathIncludes: `/v1/payment_intents/${intent?.id}` });
      const key = newKey();
      const confirmPath = `/v1/users/${userId}/topups/${reference}/confirm`;
      const before = await idempotencyCounts();
      expect(await answerOf(await post(confirmPath, undefined, key))).toMatchObject({
        status: 502,
        replayed: null,
        body: { error: { code: 'stripe_unavailable' } },
      });
      expect(await keyRows(userId)).toContainEqual(
        expect.objectContaining({
          idempotency_key: key,
          recovery_point: 'started',
          locked_at: null,
          response_status: null,
        }),
      );
      const retried = await answerOf(await post(confirmPath, undefined, key));
      expect(retried).toEqual({
        status: 200,
        replayed: null,
        body: { reference, status: 'paid', credited: true, balance: 100 },
      });
      expect(await answerOf(await post(confirmPath, undefined, key))).toEqual({ ...retried, replayed: 'true' });
      expect(countsMoved(before, await idempotencyCounts())).toEqual({
        executed: 2,
        replayed: 1,
        conflict: 0,
        in_use: 0,
      });
      const ledger = await stack.db
        .selectFrom('ledger_entries')
        .select(['reference', 'amount'])
        .where('user_id', '=', userId)
        .execute();
      expect(ledger).toEqual([{ reference: `stripe:payment:${intent?.id}`, amount: 100 }]);
    });

    it('a retryable answer is not kept under the key: a confirm retried while the intent was not paid runs again and credits once it is', async () => {
      const userId = newUser();
      const created = await answerOf(await post(`/v1/users/${userId}/topups`, { packId: 'tokens_100' }, newKey()));
      const { reference } = created.body;
      const [intent] = intentsOf(reference);
      const key = newKey();
      const confirmPath = `/v1/users/${userId}/topups/${reference}/confirm`;
      const before = await idempotencyCounts();
      expect(await answerOf(await post(confirmPath, undefined, key))).toMatchObject({
        status: 409,
        replayed: null,
        body: { error: { code: 'topup_not_paid' } },
      });
      expect(await keyRows(userId)).toContainEqual(
        expect.objectContaining({
          idempotency_key: key,
          recovery_point: 'started',
          locked_at: null,
          response_status: null,
          response_body: null,
        }),
      );
      fake.setPaymentIntentStatus(String(intent?.id), 'succeeded');
      const retried = await answerOf(await post(confirmPath, undefined, key));
      expect(retried).toEqual({
        status: 200,
        replayed: null,
        body: { reference, status: 'paid', credited: true, balance: 100 },
      });
      expect(await answerOf(await post(confirmPath, undefined, key))).toEqual({ ...retried, replayed: 'true' });
      expect(countsMoved(before, await idempotencyCounts())).toEqual({
        executed: 2,
        replayed: 1,
        conflict: 0,
        in_use: 0,
      });
      expect(
        await stack.db
          .selectFrom('topups')
          .select(['reference', 'status', 'payment_intent_id'])
          .where('user_id', '=', userId)
          .execute(),
      ).toEqual([{ reference, status: 'paid', payment_intent_id: intent?.id }]);
      const ledger = await stack.db
        .selectFrom('ledger_entries')
        .select(['reference', 'amount', 'balance_after'])
        .where('user_id', '=', userId)
        .execute();
      expect(ledger).toEqual([{ reference: `stripe:payment:${intent?.id}`, amount: 100, balance_after: 100 }]);
    });

    it('a confirm retried with its key answers the first confirm (credited once), not a second one', async () => {
      const userId = newUser();
      const created = await answerOf(await post(`/v1/users/${userId}/topups`, { packId: 'tokens_100' }, newKey()));
      expect(created.status).toBe(201);
      const { reference } = created.body;
      const [intent] = intentsOf(reference);
      fake.setPaymentIntentStatus(String(intent?.id), 'succeeded');
      const key = newKey();
      const confirmPath = `/v1/users/${userId}/topups/${reference}/confirm`;
      const first = await answerOf(await post(confirmPath, undefined, key));
      expect(first).toEqual({
        status: 200,
        replayed: null,
        body: { reference, status: 'paid', credited: true, balance: 100 },
      });
      expect(await answerOf(await post(confirmPath, undefined, key))).toEqual({ ...first, replayed: 'true' });
      // A new action (new key) is a new confirm: it credits nothing more.
      expect(await answerOf(await post(confirmPath, undefined, newKey()))).toMatchObject({
        status: 200,
        body: { credited: false, balance: 100 },
      });
      const ledger = await stack.db
        .selectFrom('ledger_entries')
        .select(['reference', 'amount'])
        .where('user_id', '=', userId)
        .execute();
      expect(ledger).toEqual([{ reference: `stripe:payment:${intent?.id}`, amount: 100 }]);
    });
  });
});
