import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRevenueCatApiClient, type EventPolicy, productionOnlyPolicy } from '@tally/billing-core';
import { sql } from 'kysely';
import { daysFromNow, FakeRevenueCat, fakeRevenueCatApiKey } from '../../support/fakes/fake-revenuecat';
import { FakeStripe } from '../../support/fakes/fake-stripe';
import { revenueCatSubscriptionEvent } from '../../support/revenuecat-events';
import { eventually, readJson, TestStack } from '../../support/stack';

const fixtures = path.resolve(__dirname, '../../fixtures/revenuecat');

async function startStack(fake: FakeRevenueCat, options: { policy?: EventPolicy; stripe?: FakeStripe } = {}) {
  return TestStack.start({
    ports: {
      revenueCat: createRevenueCatApiClient({ apiKey: fakeRevenueCatApiKey, baseUrl: fake.baseUrl, timeoutMs: 2_000 }),
      ...(options.stripe ? { stripe: options.stripe.api() } : {}),
    },
    ...(options.policy ? { policy: options.policy } : {}),
  });
}

function helpers(get: () => TestStack) {
  const finished = (providerEventId: string) => get().finishedInboxRow('revenuecat', providerEventId);
  const subscriptionOf = (userId: string) =>
    get()
      .db.selectFrom('subscriptions')
      .select(['user_id', 'status', 'plan_id', 'product_id', 'expires_at', 'store', 'auto_renew'])
      .where('user_id', '=', userId)
      .executeTakeFirst();
  const historyOf = (userId: string) =>
    get()
      .db.selectFrom('subscription_history')
      .select(['change', 'from_plan_id', 'to_plan_id', 'to_status', 'cause', 'inbox_event_id', 'request_id'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
  const send = async (body: string) => {
    const response = await get().postRevenueCat(body);
    expect(response.status).toBe(200);
    return JSON.parse(body).event.id as string;
  };
  return { finished, subscriptionOf, historyOf, send };
}

describe('RevenueCat subscriptions converge on the truth', () => {
  let fake: FakeRevenueCat;
  let stack: TestStack;
  const { finished, subscriptionOf, historyOf, send } = helpers(() => stack);

  let stripe: FakeStripe;

  beforeAll(async () => {
    fake = await FakeRevenueCat.start();
    stripe = await FakeStripe.start();
    stack = await startStack(fake, { stripe });
  });
  afterAll(async () => {
    await stack.stop();
    await fake.stop();
    await stripe.stop();
  });
  afterEach(() => stack.stopWorkers());

  it('RENEWAL processed before its INITIAL_PURCHASE: the final plan and expiry match RevenueCat', async () => {
    stack.startWorker();
    const expires = daysFromNow(30);
    fake.setSubscriber('order-user', {
      'premium.monthly': {
        expires_date: expires,
        store: 'app_store',
        is_sandbox: false,
        unsubscribe_detected_at: null,
      },
    });
    const renewal = await send(revenueCatSubscriptionEvent({ type: 'RENEWAL', userId: 'order-user' }));
    expect(await finished(renewal)).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    const initial = await send(revenueCatSubscriptionEvent({ type: 'INITIAL_PURCHASE', userId: 'order-user' }));
    expect(await finished(initial)).toMatchObject({ status: 'processed', outcome_code: 'already_synchronized' });

    expect(await subscriptionOf('order-user')).toEqual({
      user_id: 'order-user',
      status: 'active',
      plan_id: 'premium',
      product_id: 'premium.monthly',
      expires_at: new Date(expires),
      store: 'app_store',
      auto_renew: true,
    });
    expect(await historyOf('order-user')).toEqual([
      expect.objectContaining({ change: 'activated', from_plan_id: null, to_plan_id: 'premium', cause: 'inbox_event' }),
    ]);
    const answer = await stack.apiRequest('/v1/users/order-user/subscription');
    expect(answer.status).toBe(200);
    expect(await readJson(answer)).toEqual({
      userId: 'order-user',
      planId: 'premium',
      status: 'active',
      expiresAt: expires,
      store: 'app_store',
      autoRenew: true,
    });
  });

  it('an EXPIRATION processed after a later RENEWAL does not take away an active subscription', async () => {
    stack.startWorker();
    const renewed = daysFromNow(30);
    // RevenueCat's truth after the renewal: the subscription runs for another month.
    fake.setSubscriber('expiry-user', { 'premium.monthly': { expires_date: renewed, store: 'app_store' } });
    const renewal = await send(revenueCatSubscriptionEvent({ type: 'RENEWAL', userId: 'expiry-user' }));
    await finished(renewal);
    // The old period's EXPIRATION arrives late.
    const expiration = await send(revenueCatSubscriptionEvent({ type: 'EXPIRATION', userId: 'expiry-user' }));
    expect(await finished(expiration)).toMatchObject({ status: 'processed', outcome_code: 'already_synchronized' });
    expect(await subscriptionOf('expiry-user')).toMatchObject({ status: 'active', plan_id: 'premium' });
    expect((await subscriptionOf('expiry-user'))?.expires_at).toEqual(new Date(renewed));
    expect(await historyOf('expiry-user')).toHaveLength(1);

    // When RevenueCat says it really ended, the plan goes.
    fake.setSubscriber('expiry-user', { 'premium.monthly': { expires_date: daysFromNow(-1), store: 'app_store' } });
    const real = await send(revenueCatSubscriptionEvent({ type: 'EXPIRATION', userId: 'expiry-user' }));
    expect(await finished(real)).toMatchObject({ outcome_code: 'subscription_synced' });
    expect(await subscriptionOf('expiry-user')).toMatchObject({ status: 'inactive', plan_id: null, auto_renew: false });
    expect((await historyOf('expiry-user')).map((row) => row.change)).toEqual(['activated', 'deactivated']);
  });

  it('TRANSFER from A to B: A loses the plan, B gets it', async () => {
    stack.startWorker();
    const expires = daysFromNow(20);
    fake.setSubscriber('transfer-a', { 'premium.annual': { expires_date: expires, store: 'play_store' } });
    await finished(await send(revenueCatSubscriptionEvent({ userId: 'transfer-a', productId: 'premium.annual' })));
    expect(await subscriptionOf('transfer-a')).toMatchObject({ status: 'active', plan_id: 'premium' });

    fake.setSubscriber('transfer-a', {});
    fake.setSubscriber('transfer-b', { 'premium.annual': { expires_date: expires, store: 'play_store' } });
    const transfer = await send(
      revenueCatSubscriptionEvent({ type: 'TRANSFER', transferredFrom: ['transfer-a'], transferredTo: ['transfer-b'] }),
    );
    const row = await finished(transfer);
    expect(row).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    expect(await subscriptionOf('transfer-a')).toMatchObject({ status: 'inactive', plan_id: null });
    expect(await subscriptionOf('transfer-b')).toMatchObject({ status: 'active', plan_id: 'premium' });
    expect(await historyOf('transfer-b')).toEqual([
      expect.objectContaining({ change: 'activated', cause: 'inbox_event', inbox_event_id: row.id }),
    ]);
    expect((await historyOf('transfer-a')).map((entry) => entry.change)).toEqual(['activated', 'deactivated']);
  });

  it.each([
    [
      'PRODUCT_CHANGE',
      { 'premium.annual': { expires_date: daysFromNow(365), store: 'app_store' } },
      'premium.annual',
      true,
    ],
    [
      'UNCANCELLATION',
      { 'premium.monthly': { expires_date: daysFromNow(10), store: 'app_store' } },
      'premium.monthly',
      true,
    ],
    [
      'BILLING_ISSUE',
      {
        'premium.monthly': {
          expires_date: daysFromNow(-1),
          grace_period_expires_date: daysFromNow(6),
          billing_issues_detected_at: daysFromNow(-1),
          store: 'app_store',
        },
      },
      'premium.monthly',
      true,
    ],
    [
      'SUBSCRIPTION_PAUSED',
      {
        'premium.monthly:monthly-base': {
          expires_date: daysFromNow(3),
          unsubscribe_detected_at: daysFromNow(0),
          store: 'play_store',
        },
      },
      'premium.monthly:monthly-base',
      false,
    ],
  ])('%s leaves the state RevenueCat reports', async (type, subscriptions, productId, autoRenew) => {
    stack.startWorker();
    const user = `state-${type}`;
    // Before: a cancelled monthly subscription.
    fake.setSubscriber(user, {
      'premium.monthly': {
        expires_date: daysFromNow(10),
        store: 'app_store',
        unsubscribe_detected_at: daysFromNow(-2),
      },
    });
    await finished(await send(revenueCatSubscriptionEvent({ userId: user })));
    fake.setSubscriber(user, subscriptions);
    const id = await send(revenueCatSubscriptionEvent({ type, userId: user }));
    expect(await finished(id)).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    const expected = Object.values(subscriptions)[0] as { expires_date: string; grace_period_expires_date?: string };
    expect(await subscriptionOf(user)).toMatchObject({
      status: 'active',
      plan_id: 'premium',
      product_id: productId,
      expires_at: new Date(expected.grace_period_expires_date ?? expected.expires_date),
      auto_renew: autoRenew,
    });
  });

  it('the same event processed again, and an on-demand sync right after: no writes', async () => {
    stack.startWorker();
    fake.setSubscriber('dup-user', { 'premium.monthly': { expires_date: daysFromNow(30), store: 'app_store' } });
    const body = revenueCatSubscriptionEvent({ userId: 'dup-user' });
    const id = await send(body);
    const row = await finished(id);
    expect(await historyOf('dup-user')).toHaveLength(1);
    // Every column (updated_at and provider_read_at included) and the row version (xmin): an
    // UPDATE that rewrote the same values would still show.
    const wholeRow = () =>
      stack.db
        .selectFrom('subscriptions')
        .selectAll()
        .select(sql<string>`xmin::text`.as('row_version'))
        .where('user_id', '=', 'dup-user')
        .executeTakeFirstOrThrow();
    const before = await wholeRow();
    expect(before).toMatchObject({ status: 'active', plan_id: 'premium', provider_read_at: expect.any(Date) });

    const replay = await stack.apiRequest(`/admin/events/${row.id}/replay`, { method: 'POST' });
    expect(replay.status).toBe(200);
    await eventually('the replay to finish', async () => {
      const again = await finished(id);
      return again.replays === 1 && again.status === 'processed' ? again : undefined;
    });
    expect(await finished(id)).toMatchObject({ outcome_code: 'already_synchronized' });
    // A redelivery of the same body is a duplicate at ingest.
    expect(await readJson(await stack.postRevenueCat(body))).toMatchObject({ status: 'duplicate' });

    const sync = await stack.apiRequest('/v1/users/dup-user/subscription/sync', { method: 'POST' });
    expect(sync.status).toBe(200);
    expect(await readJson(sync)).toMatchObject({ result: 'already_synchronized', subscription: { planId: 'premium' } });
    // Both re-read RevenueCat (a later read: request_date_ms moved on) and found nothing to write.
    expect(fake.callsFor('dup-user')).toBe(3);
    expect(await historyOf('dup-user')).toHaveLength(1);
    expect(await wholeRow()).toEqual(before);
  });

  it('RevenueCat answering 500 then 429 then 200: retried and converges; the 429 spends no attempt', async () => {
    stack.startWorker({ backoff: { baseDelayMs: 50, maxDelayMs: 100 } });
    fake.setSubscriber('flaky-user', { 'premium.monthly': { expires_date: daysFromNow(30), store: 'app_store' } });
    fake.script('flaky-user', { status: 500 }, { status: 429, retryAfter: '1' });
    const started = Date.now();
    const id = await send(revenueCatSubscriptionEvent({ userId: 'flaky-user' }));
    const row = await eventually('the event to be processed', async () => {
      const current = await finished(id);
      return current.status === 'processed' ? current : undefined;
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(row).toMatchObject({ outcome_code: 'subscription_synced', attempts: 2, deferrals: 1, last_error: null });
    expect(fake.callsFor('flaky-user')).toBe(3);
    expect(await subscriptionOf('flaky-user')).toMatchObject({ status: 'active', plan_id: 'premium' });
  });

  it('with RevenueCat down past the attempt cap the event parks with the error; a requeue converges', async () => {
    stack.startWorker({ maxAttempts: 3, backoff: { baseDelayMs: 20, maxDelayMs: 50 } });
    fake.setSubscriber('down-user', { 'premium.monthly': { expires_date: daysFromNow(30), store: 'app_store' } });
    fake.script('down-user', { status: 503 }, { status: 503 }, { status: 503 });
    const id = await send(revenueCatSubscriptionEvent({ userId: 'down-user' }));
    const parked = await finished(id);
    expect(parked).toMatchObject({ status: 'failed', attempts: 3, outcome_code: 'attempts_exhausted' });
    expect(parked.last_error).toContain('503');
    expect(await subscriptionOf('down-user')).toBeUndefined();

    const requeue = await stack.apiRequest(`/admin/events/${parked.id}/requeue`, { method: 'POST' });
    expect(requeue.status).toBe(200);
    await eventually('the requeued event to converge', async () => (await finished(id)).status === 'processed');
    expect(await subscriptionOf('down-user')).toMatchObject({ status: 'active', plan_id: 'premium' });
  });

  it("a brand-new user's first INITIAL_PURCHASE assigns the plan, linking its anonymous id", async () => {
    stack.startWorker();
    const anonymous = '$RCAnonymousID:0123456789abcdef';
    // RevenueCat first knew the customer by its anonymous id: its read says so
    // (original_app_user_id), and that is what links the two ids, not the body's aliases.
    fake.setSubscriber(
      'new-user',
      { 'premium.monthly': { expires_date: daysFromNow(30), store: 'app_store' } },
      [anonymous],
      { originalAppUserId: anonymous },
    );
    const id = await send(
      revenueCatSubscriptionEvent({
        userId: 'new-user',
        originalAppUserId: anonymous,
        aliases: [anonymous, 'new-user'],
      }),
    );
    expect(await finished(id)).toMatchObject({ status: 'processed', outcome_code: 'subscription_synced' });
    expect(await subscriptionOf('new-user')).toMatchObject({ status: 'active', plan_id: 'premium' });
    // Reads by the linked anonymous id answer for the same user.
    const byAlias = await stack.apiRequest(`/v1/users/${encodeURIComponent(anonymous)}/subscription`);
    expect(await readJson(byAlias)).toMatchObject({ planId: 'premium', status: 'active' });
    expect(fake.unknownRequested).not.toContain('new-user');
  });

  it('an on-demand sync of an id Tally has never seen answers unknown_user without calling RevenueCat', async () => {
    const callsBefore = fake.totalCalls();
    const response = await stack.apiRequest('/v1/users/never-seen-user/subscription/sync', { method: 'POST' });
    expect(response.status).toBe(404);
    expect(await readJson(response)).toEqual({ error: { code: 'unknown_user', message: expect.any(String) } });
    expect(fake.totalCalls()).toBe(callsBefore);
    expect(fake.callsFor('never-seen-user')).toBe(0);
    expect(fake.unknownRequested).not.toContain('never-seen-user');
    const read = await stack.apiRequest('/v1/users/never-seen-user/subscription');
    expect(read.status).toBe(404);
  });

  it('an on-demand sync of an id only the app sent (a top-up, a studio request) answers unknown_user without calling RevenueCat', async () => {
    const viaStudio = 'app-only-studio-user';
    const viaTopup = 'app-only-topup-user';
    const studio = await stack.apiRequest(`/v1/users/${viaStudio}/studio/requests`, {
      method: 'POST',
      body: { kind: 'image_edit', input: { prompt: 'known to the app only' } },
    });
    expect(studio.status).toBe(202);
    const topup = await stack.apiRequest(`/v1/users/${viaTopup}/topups`, {
      method: 'POST',
      body: { packId: 'tokens_100' },
    });
    expect(topup.status).toBe(201);
    // Both are Tally users now (each has a wallet), but RevenueCat never named them.
    const users = await stack.db.selectFrom('users').select('id').where('id', 'in', [viaStudio, viaTopup]).execute();
    expect(users).toHaveLength(2);

    const callsBefore = fake.totalCalls();
    for (const userId of [viaStudio, viaTopup]) {
      const response = await stack.apiRequest(`/v1/users/${userId}/subscription/sync`, { method: 'POST' });
      expect({ userId, status: response.status, body: await readJson(response) }).toEqual({
        userId,
        status: 404,
        body: { error: { code: 'unknown_user', message: expect.any(String) } },
      });
    }
    expect(fake.totalCalls()).toBe(callsBefore);
    expect(fake.unknownRequested).not.toContain(viaStudio);
    expect(fake.unknownRequested).not.toContain(viaTopup);

    // Once RevenueCat itself sends the id, the on-demand sync reads it.
    stack.startWorker();
    fake.setSubscriber(viaStudio, { 'premium.monthly': { expires_date: daysFromNow(9), store: 'app_store' } });
    await finished(await send(revenueCatSubscriptionEvent({ userId: viaStudio })));
    const sync = await stack.apiRequest(`/v1/users/${viaStudio}/subscription/sync`, { method: 'POST' });
    expect(sync.status).toBe(200);
    expect(await readJson(sync)).toMatchObject({ result: 'already_synchronized', subscription: { planId: 'premium' } });
    expect(fake.unknownRequested).not.toContain(viaStudio);
  });

  it('an on-demand sync of a known user converges on RevenueCat and records the request in the history', async () => {
    stack.startWorker();
    fake.setSubscriber('ondemand-user', { 'premium.monthly': { expires_date: daysFromNow(5), store: 'app_store' } });
    await finished(await send(revenueCatSubscriptionEvent({ userId: 'ondemand-user' })));
    const later = daysFromNow(40);
    fake.setSubscriber('ondemand-user', { 'premium.annual': { expires_date: later, store: 'app_store' } });
    const response = await stack.apiRequest('/v1/users/ondemand-user/subscription/sync', { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({
      userId: 'ondemand-user',
      result: 'changed',
      subscription: { planId: 'premium', status: 'active', expiresAt: later, store: 'app_store', autoRenew: true },
    });
    const history = await historyOf('ondemand-user');
    expect(history.map((row) => [row.change, row.cause])).toEqual([
      ['activated', 'inbox_event'],
      ['renewed', 'on_demand_sync'],
    ]);
    expect(history[1]?.request_id).toEqual(expect.any(String));
  });

  it("an on-demand sync answers RevenueCat's 429 as 503 with Retry-After and its other failures as 502, writing nothing", async () => {
    stack.startWorker();
    const user = 'ondemand-errors-user';
    fake.setSubscriber(user, { 'premium.monthly': { expires_date: daysFromNow(5), store: 'app_store' } });
    await finished(await send(revenueCatSubscriptionEvent({ userId: user })));
    const before = await subscriptionOf(user);
    fake.setSubscriber(user, { 'premium.annual': { expires_date: daysFromNow(300), store: 'app_store' } });
    const sync = async () => {
      const response = await stack.apiRequest(`/v1/users/${user}/subscription/sync`, { method: 'POST' });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await readJson(response),
      };
    };
    const callsBefore = fake.callsFor(user);

    fake.script(user, { status: 429, retryAfter: '7' });
    expect(await sync()).toEqual({
      status: 503,
      retryAfter: '7',
      body: { error: { code: 'revenuecat_rate_limited', message: expect.any(String) } },
    });
    for (const status of [500, 503] as const) {
      fake.script(user, { status });
      expect({ status, answer: await sync() }).toEqual({
        status,
        answer: {
          status: 502,
          retryAfter: null,
          body: { error: { code: 'revenuecat_unavailable', message: expect.stringContaining(String(status)) } },
        },
      });
    }
    // A refused request (a wrong key) is a failure upstream as well.
    fake.script(user, { status: 401 });
    expect(await sync()).toEqual({
      status: 502,
      retryAfter: null,
      body: { error: { code: 'revenuecat_rejected', message: expect.stringContaining('401') } },
    });
    expect(fake.callsFor(user)).toBe(callsBefore + 4);
    expect(await subscriptionOf(user)).toEqual(before);
    expect(await historyOf(user)).toHaveLength(1);

    // RevenueCat answers again: the same request converges.
    expect(await sync()).toMatchObject({
      status: 200,
      body: { result: 'changed', subscription: { planId: 'premium' } },
    });
    expect(await subscriptionOf(user)).toMatchObject({ product_id: 'premium.annual' });
  });

  it.each([
    // Both events name the same id: the engine's lock on the event's user and the route's lock
    // on the canonical user are the same lock.
    ['under the same id', 'race-user', 'race-user'],
    // Different ids linked to one user: the engine locks two different ids, so only the route's
    // lock on the canonical user serialises the writes.
    ['under two linked ids', 'race-linked-user', '$RCAnonymousID:00000000000race01'],
  ])(
    'two events for the same user %s processed at once by two workers: their writes serialise into one consistent final state',
    async (_case, user, otherId) => {
      // The user is known already: a first event, while RevenueCat reports no subscription, links
      // its ids and writes no subscription. (A new user's first writes would serialise on the
      // user row insert instead, and hide a missing lock.)
      fake.setSubscriber(user, {}, [otherId]);
      stack.startWorker();
      const linking = await send(
        revenueCatSubscriptionEvent({ userId: otherId, originalAppUserId: otherId, aliases: [otherId, user] }),
      );
      expect(await finished(linking)).toMatchObject({ status: 'processed', outcome_code: 'already_synchronized' });
      const links = await stack.db.selectFrom('user_aliases').select('alias').where('user_id', '=', user).execute();
      expect(links.map((link) => link.alias).sort()).toEqual([...new Set([user, otherId])].sort());
      expect(await subscriptionOf(user)).toBeUndefined();
      await stack.stopWorkers();

      const expires = daysFromNow(30);
      fake.setSubscriber(user, { 'premium.monthly': { expires_date: expires, store: 'app_store' } }, [otherId]);
      // Neither read is answered until both are in flight: both events are past their reads and
      // apply at the same moment.
      fake.holdReadsUntilConcurrent(user, 2);
      const ids = [
        await send(revenueCatSubscriptionEvent({ type: 'INITIAL_PURCHASE', userId: user })),
        await send(
          revenueCatSubscriptionEvent({
            type: 'RENEWAL',
            userId: otherId,
            originalAppUserId: user,
            aliases: [otherId, user],
          }),
        ),
      ];
      stack.startWorker({ concurrency: 1 });
      stack.startWorker({ concurrency: 1 });
      const rows = await Promise.all(ids.map((id) => finished(id)));
      expect(fake.maxReadsInFlight(user)).toBe(2);
      expect(rows.map((row) => row.status)).toEqual(['processed', 'processed']);
      // Serialised: the first write activates, the second finds it already synchronized. Unserialised,
      // both would see no subscription and both would write (two history rows).
      expect(rows.map((row) => row.outcome_code).sort()).toEqual(['already_synchronized', 'subscription_synced']);
      expect(await subscriptionOf(user)).toMatchObject({ status: 'active', expires_at: new Date(expires) });
      expect(await historyOf(user)).toEqual([
        expect.objectContaining({ change: 'activated', to_plan_id: 'premium', cause: 'inbox_event' }),
      ]);
      // The linked id has nothing of its own: every write went to the canonical user.
      if (otherId !== user) expect(await subscriptionOf(otherId)).toBeUndefined();
    },
  );

  it('events stored as ignored by the old placeholder converge when replayed by outcome', async () => {
    fake.setSubscriber('legacy-user', { 'premium.monthly': { expires_date: daysFromNow(15), store: 'app_store' } });
    const body = revenueCatSubscriptionEvent({ id: 'rc-legacy-1', userId: 'legacy-user' });
    // As the placeholder left them: ignored with awaiting_subscription_sync.
    const inserted = await stack.db
      .insertInto('inbox_events')
      .values({
        provider: 'revenuecat',
        provider_event_id: 'rc-legacy-1',
        type: 'INITIAL_PURCHASE',
        livemode: true,
        environment: 'production',
        user_id: 'legacy-user',
        provider_customer_id: 'legacy-user',
        provider_subscription_id: null,
        provider_payment_intent_id: null,
        provider_invoice_id: null,
        raw_body: body,
        status: 'ignored',
        attempts: 1,
        outcome_code: 'awaiting_subscription_sync',
        outcome_detail: 'subscription sync not built yet; replay once it is',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    stack.startWorker();
    const replay = await stack.apiRequest('/admin/events/replay', {
      method: 'POST',
      body: { outcome: 'awaiting_subscription_sync' },
    });
    expect(replay.status).toBe(200);
    expect(await readJson(replay)).toMatchObject({ replayed: 1, ids: [inserted.id] });
    await eventually('the replayed event to sync', async () => (await finished('rc-legacy-1')).status === 'processed');
    expect(await finished('rc-legacy-1')).toMatchObject({ outcome_code: 'subscription_synced', replays: 1 });
    expect(await subscriptionOf('legacy-user')).toMatchObject({ status: 'active', plan_id: 'premium' });
  });

  it('processes every published RevenueCat sample body without parking any', async () => {
    stack.startWorker();
    const files = readdirSync(fixtures).filter((name) => name.endsWith('.json'));
    const ids = new Set<string>();
    for (const file of files) {
      const body = readFileSync(path.join(fixtures, file), 'utf8');
      const response = await stack.postRevenueCat(body);
      expect({ file, status: response.status }).toEqual({ file, status: 200 });
      ids.add(JSON.parse(body).event.id);
    }
    for (const id of ids) {
      const row = await finished(id);
      expect({ id, status: row.status, error: row.last_error }).toEqual({
        id,
        status: expect.stringMatching(/^(processed|ignored)$/),
        error: null,
      });
    }
  });
});

describe('RevenueCat subscriptions under PAYMENT_ENVIRONMENTS=production', () => {
  let fake: FakeRevenueCat;
  let stack: TestStack;
  const { finished, subscriptionOf, send } = helpers(() => stack);

  beforeAll(async () => {
    fake = await FakeRevenueCat.start();
    stack = await startStack(fake, { policy: productionOnlyPolicy });
    stack.startWorker();
  });
  afterAll(async () => {
    await stack.stop();
    await fake.stop();
  });

  it('a SANDBOX event is ignored without reading RevenueCat', async () => {
    fake.setSubscriber('sandbox-event-user', { 'premium.monthly': { expires_date: daysFromNow(3), is_sandbox: true } });
    const id = await send(revenueCatSubscriptionEvent({ userId: 'sandbox-event-user', environment: 'SANDBOX' }));
    expect(await finished(id)).toMatchObject({ status: 'ignored', outcome_code: 'other_environment' });
    expect(fake.callsFor('sandbox-event-user')).toBe(0);
    expect(await subscriptionOf('sandbox-event-user')).toBeUndefined();
  });

  it('sandbox subscriptions move no plan; production ones do', async () => {
    fake.setSubscriber('sandbox-sub-user', {
      'premium.annual': { expires_date: daysFromNow(300), is_sandbox: true, store: 'app_store' },
    });
    // An event that names no environment runs (the API says which subscriptions are sandbox).
    const id = await send(revenueCatSubscriptionEvent({ userId: 'sandbox-sub-user', environment: null }));
    expect(await finished(id)).toMatchObject({ status: 'processed', outcome_code: 'already_synchronized' });
    expect(await subscriptionOf('sandbox-sub-user')).toBeUndefined();

    const production = daysFromNow(20);
    fake.setSubscriber('sandbox-sub-user', {
      'premium.annual': { expires_date: daysFromNow(300), is_sandbox: true, store: 'app_store' },
      'premium.monthly': { expires_date: production, is_sandbox: false, store: 'app_store' },
    });
    const next = await send(revenueCatSubscriptionEvent({ userId: 'sandbox-sub-user' }));
    expect(await finished(next)).toMatchObject({ outcome_code: 'subscription_synced' });
    expect(await subscriptionOf('sandbox-sub-user')).toMatchObject({
      plan_id: 'premium',
      product_id: 'premium.monthly',
      expires_at: new Date(production),
    });
  });
});

describe('RevenueCat subscriptions without REVENUECAT_API_KEY', () => {
  let fake: FakeRevenueCat;
  let stack: TestStack;
  const { finished, subscriptionOf, historyOf, send } = helpers(() => stack);

  beforeAll(async () => {
    fake = await FakeRevenueCat.start();
    // No RevenueCat port: neither the worker nor the api has a key.
    stack = await TestStack.start();
  });
  afterAll(async () => {
    await stack.stop();
    await fake.stop();
  });

  it('a subscription event parks as not_configured, the on-demand sync answers 503, and a requeue once the key is set converges', async () => {
    stack.startWorker();
    const user = 'unconfigured-user';
    const expires = daysFromNow(30);
    fake.setSubscriber(user, { 'premium.monthly': { expires_date: expires, store: 'app_store' } });
    const id = await send(revenueCatSubscriptionEvent({ userId: user }));
    const parked = await finished(id);
    expect(parked).toMatchObject({ status: 'failed', attempts: 1, outcome_code: 'not_configured' });
    expect(parked.last_error).toContain('REVENUECAT_API_KEY');
    expect(await subscriptionOf(user)).toBeUndefined();

    // The id is known (RevenueCat sent it), so the answer is about the missing key, not the user.
    const sync = await stack.apiRequest(`/v1/users/${user}/subscription/sync`, { method: 'POST' });
    expect({ status: sync.status, body: await readJson(sync) }).toEqual({
      status: 503,
      body: { error: { code: 'not_configured', message: expect.stringContaining('REVENUECAT_API_KEY') } },
    });
    expect(fake.totalCalls()).toBe(0);

    // The operator sets the key (the worker restarts with it) and requeues what parked for lack of it.
    await stack.stopWorkers();
    stack.ports = {
      revenueCat: createRevenueCatApiClient({ apiKey: fakeRevenueCatApiKey, baseUrl: fake.baseUrl, timeoutMs: 2_000 }),
    };
    stack.startWorker();
    const requeue = await stack.apiRequest('/admin/events/requeue', {
      method: 'POST',
      body: { outcome: 'not_configured' },
    });
    expect(await readJson(requeue)).toMatchObject({ requeued: 1, ids: [parked.id] });
    await eventually('the requeued event to converge', async () => (await finished(id)).status === 'processed');
    expect(await finished(id)).toMatchObject({ outcome_code: 'subscription_synced', last_error: null });
    expect(await subscriptionOf(user)).toEqual({
      user_id: user,
      status: 'active',
      plan_id: 'premium',
      product_id: 'premium.monthly',
      expires_at: new Date(expires),
      store: 'app_store',
      auto_renew: true,
    });
    expect(await historyOf(user)).toEqual([
      expect.objectContaining({ change: 'activated', cause: 'inbox_event', inbox_event_id: parked.id }),
    ]);
  });
});
