import { failStudioRequest } from '@tally/billing-core';
import { sql } from 'kysely';
import { answerOf, grantOverApi, postAnswer } from '../../support/requests';
import type { Json } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStack, verifyLedgerAfterEach } from '../../support/suite';

/**
 * Spend limits per user (docs/spend-limits.md) over HTTP against real Postgres: tokens spent per
 * UTC day and calendar month by debits, usage, captures and studio, counted with the spend under
 * the wallet lock; what active holds reserve counts until they end; a spend past a limit is 402
 * spend_limit_reached and spends nothing. Time moves the way the model check moves it: by moving
 * stored times back (here the counters' days), never by sleeping.
 */
describe('spend limits per user', () => {
  const stack = suiteStack();
  verifyLedgerAfterEach(stack);

  const post = (path: string, body: Json = {}) => postAnswer(stack, path, body);
  const grant = (userId: string, amount: number) => grantOverApi(stack, userId, amount);
  const debit = (userId: string, amount: number, reference: string) =>
    post(`/v1/users/${userId}/debits`, { amount, reference });
  const putLimits = (userId: string, body: Json) =>
    stack.apiRequest(`/v1/users/${userId}/limits`, { method: 'PUT', body }).then(answerOf);
  const limitsOf = async (userId: string) => (await stack.apiRequest(`/v1/users/${userId}/limits`).then(answerOf)).body;
  const spentRows = (userId: string) =>
    stack.db.selectFrom('spend_days').select(['day', 'spent']).where('user_id', '=', userId).orderBy('day').execute();
  /** The database's UTC day, and the instants the day and the month end. */
  const clock = async () => {
    const row = (
      await sql<{ today: string; tomorrow: string; month_end: string; yesterday_same_month: boolean }>`
        SELECT d::text AS today, (d + 1)::text AS tomorrow,
               (date_trunc('month', d::timestamp) + interval '1 month')::date::text AS month_end,
               extract(day FROM d) > 1 AS yesterday_same_month
          FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS d) t`.execute(stack.db)
    ).rows[0];
    if (!row) throw new Error('no database clock');
    return {
      today: row.today,
      dayEnds: `${row.tomorrow}T00:00:00.000Z`,
      monthEnds: `${row.month_end}T00:00:00.000Z`,
      yesterdaySameMonth: row.yesterday_same_month,
    };
  };
  const refusal = (period: 'daily' | 'monthly', fields: Record<string, unknown>) => ({
    status: 402,
    body: {
      error: { code: 'spend_limit_reached', message: expect.stringContaining(`the ${period} spend limit`) },
      period,
      ...fields,
    },
  });

  it('ten concurrent debits against a daily limit spend at most the limit; each refusal says the limit, what was spent and when it resets', async () => {
    const userId = stripeId('user');
    await grant(userId, 1_000);
    const { dayEnds, monthEnds, today } = await clock();
    expect(await putLimits(userId, { daily: 100 })).toEqual({
      status: 200,
      body: {
        userId,
        held: 0,
        daily: { limit: 100, source: 'user', spent: 0, resetsAt: dayEnds },
        monthly: { limit: null, source: 'none', spent: 0, resetsAt: monthEnds },
      },
    });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => debit(userId, 30, `burst-${i}`)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(7);
    for (const answer of refused) {
      expect(answer).toEqual(refusal('daily', { limit: 100, spent: 90, held: 0, requested: 30, resetsAt: dayEnds }));
    }
    const debited = await stack.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.sum<string>('amount').as('sum'))
      .where('user_id', '=', userId)
      .where('reason', '=', 'debit')
      .executeTakeFirstOrThrow();
    expect(Number(debited.sum)).toBe(-90);
    expect(await spentRows(userId)).toEqual([{ day: today, spent: 90 }]);
    expect((await limitsOf(userId)).daily).toEqual({ limit: 100, source: 'user', spent: 90, resetsAt: dayEnds });
  });

  it('a hold counts what it reserves while active; a release stops it counting; a capture counts what it took and never fails for a limit', async () => {
    const userId = stripeId('user');
    await grant(userId, 500);
    await putLimits(userId, { daily: 100 });
    const hold = await post(`/v1/users/${userId}/holds`, { amount: 60, reference: 'h-60' });
    expect(hold.status).toBe(201);
    expect(await debit(userId, 50, 'over')).toMatchObject(refusal('daily', { spent: 0, held: 60, requested: 50 }));
    expect((await debit(userId, 40, 'fits')).status).toBe(201);
    expect(await limitsOf(userId)).toMatchObject({ held: 60, daily: { spent: 40 } });
    expect((await post(`/v1/users/${userId}/holds`, { amount: 1, reference: 'h-1' })).status).toBe(402);
    // Released: what it reserved no longer counts.
    expect((await post(`/v1/users/${userId}/holds/${hold.body.id}/release`)).status).toBe(200);
    expect((await debit(userId, 50, 'after-release')).status).toBe(201);
    expect(await limitsOf(userId)).toMatchObject({ held: 0, daily: { spent: 90 } });
    // A capture of what was held counts as spent, and is not refused even when the limit drops below it.
    const small = await post(`/v1/users/${userId}/holds`, { amount: 10, reference: 'h-10' });
    expect(small.status).toBe(201);
    await putLimits(userId, { daily: 50 });
    const captured = await post(`/v1/users/${userId}/holds/${small.body.id}/capture`, { amount: 8 });
    expect(captured).toMatchObject({ status: 200, body: { captured: 8, released: 2 } });
    expect(await limitsOf(userId)).toMatchObject({ held: 0, daily: { limit: 50, spent: 98 } });
    expect((await debit(userId, 1, 'past-lowered')).status).toBe(402);
  });

  it('usage, a priced capture (its excess too) and paid studio requests count, free ones do not; a failed studio generation given back stops counting', async () => {
    const userId = stripeId('user');
    await grant(userId, 500);
    await putLimits(userId, { daily: 50 });
    const use = (quantity: number, reference: string) =>
      post(`/v1/users/${userId}/usage`, { feature: 'video', quantity, reference });
    expect(await use(10, 'v-10')).toMatchObject({ status: 201, body: { cost: 20 } });
    expect(await use(16, 'v-16')).toEqual(
      refusal('daily', { limit: 50, spent: 20, held: 0, requested: 32, resetsAt: expect.any(String) }),
    );
    // A hold by estimate counts its estimate as a hold of an amount does; its capture counts what
    // it cost, the excess past the estimate included.
    const estimate = (quantity: number, reference: string) =>
      post(`/v1/users/${userId}/holds`, { feature: 'video', quantity, reference });
    expect(await estimate(16, 'est-16')).toMatchObject(refusal('daily', { spent: 20, requested: 32 }));
    const small = await estimate(2, 'est-2');
    expect(small).toMatchObject({ status: 201, body: { amount: 4 } });
    expect(await limitsOf(userId)).toMatchObject({ held: 4, daily: { spent: 20 } });
    expect(await post(`/v1/users/${userId}/holds/${small.body.id}/capture`, { quantity: 5 })).toMatchObject({
      status: 200,
      body: { cost: 10, captured: 4, excess: 6 },
    });
    expect(await limitsOf(userId)).toMatchObject({ held: 0, daily: { spent: 30 } });
    const studio = (body: Json) => post(`/v1/users/${userId}/studio/requests`, { ...body, input: { prompt: 'x' } });
    // The example catalog gives two free music requests a day: they spend nothing and count nothing.
    for (let free = 0; free < 2; free++) {
      expect(await studio({ kind: 'music', durationSeconds: 10 })).toMatchObject({
        status: 202,
        body: { freeTier: true },
      });
    }
    expect(await studio({ kind: 'music', durationSeconds: 10 })).toMatchObject({
      status: 202,
      body: { freeTier: false, tokensCharged: 5 },
    });
    const full = await studio({ kind: 'music', full: true });
    expect(full).toMatchObject({ status: 202, body: { tokensCharged: 15 } });
    expect((await limitsOf(userId)).daily).toMatchObject({ spent: 50 });
    expect(await studio({ kind: 'music', durationSeconds: 10 })).toMatchObject(
      refusal('daily', { spent: 50, requested: 5 }),
    );
    // Refused: no request row, no debit.
    expect(
      await stack.db.selectFrom('studio_requests').select('id').where('user_id', '=', userId).execute(),
    ).toHaveLength(4);
    const row = await stack.db
      .selectFrom('studio_requests')
      .select('id')
      .where('public_id', '=', full.body.id)
      .executeTakeFirstOrThrow();
    const failed = await failStudioRequest(stack.outboxDeps(), row.id, { code: 'ai_failed', message: 'test' });
    expect(failed).toMatchObject({ kind: 'failed', refund: 'refunded' });
    expect((await limitsOf(userId)).daily).toMatchObject({ spent: 35 });
    expect((await studio({ kind: 'music', durationSeconds: 10 })).status).toBe(202);
    expect((await limitsOf(userId)).daily).toMatchObject({ spent: 40 });
  });

  it('a retry of an applied reference answers as before, never a 402, even past the limit', async () => {
    const userId = stripeId('user');
    await grant(userId, 500);
    await putLimits(userId, { daily: 50 });
    const first = await debit(userId, 40, 'once');
    expect(first.status).toBe(201);
    const usage = await post(`/v1/users/${userId}/usage`, { feature: 'video', quantity: 5, reference: 'u-once' });
    expect(usage.status).toBe(201);
    // Spent 50 of 50: a new spend is refused, the retries answer their first answers.
    expect((await debit(userId, 1, 'new')).status).toBe(402);
    expect(await debit(userId, 40, 'once')).toMatchObject({
      status: 200,
      body: { ledgerReference: 'debit:once', amount: 40, balance: first.body.balance, draws: first.body.draws },
    });
    expect(await post(`/v1/users/${userId}/usage`, { feature: 'video', quantity: 5, reference: 'u-once' })).toEqual({
      status: 200,
      body: usage.body,
    });
    await putLimits(userId, { daily: null });
    const hold = await post(`/v1/users/${userId}/holds`, { amount: 30, reference: 'h-once' });
    expect(hold.status).toBe(201);
    await putLimits(userId, { daily: 10 });
    expect(await post(`/v1/users/${userId}/holds`, { amount: 30, reference: 'h-once' })).toMatchObject({
      status: 200,
      body: { id: hold.body.id },
    });
  });

  it('the daily count resets at the UTC day and the monthly one at the calendar month (the stored days moved back)', async () => {
    const userId = stripeId('user');
    await grant(userId, 1_000);
    const { dayEnds, monthEnds, yesterdaySameMonth } = await clock();
    await putLimits(userId, { daily: 50, monthly: 80 });
    expect((await debit(userId, 50, 'day-1')).status).toBe(201);
    expect(await debit(userId, 1, 'day-1-more')).toEqual(
      refusal('daily', { limit: 50, spent: 50, held: 0, requested: 1, resetsAt: dayEnds }),
    );
    // A day goes by.
    await sql`UPDATE spend_days SET day = day - 1 WHERE user_id = ${userId}`.execute(stack.db);
    const monthSoFar = yesterdaySameMonth ? 50 : 0;
    expect(await limitsOf(userId)).toMatchObject({ daily: { spent: 0 }, monthly: { spent: monthSoFar } });
    expect((await debit(userId, 30, 'day-2')).status).toBe(201);
    if (yesterdaySameMonth) {
      expect(await debit(userId, 1, 'day-2-more')).toEqual(
        refusal('monthly', { limit: 80, spent: 80, held: 0, requested: 1, resetsAt: monthEnds }),
      );
    }
    // The month goes by: 31 days back is always in an earlier month.
    await sql`UPDATE spend_days SET day = day - 31 WHERE user_id = ${userId}`.execute(stack.db);
    expect(await limitsOf(userId)).toMatchObject({ daily: { spent: 0 }, monthly: { spent: 0 } });
    expect((await debit(userId, 50, 'month-2')).status).toBe(201);
    expect((await limitsOf(userId)).monthly).toEqual({ limit: 80, source: 'user', spent: 50, resetsAt: monthEnds });
  });

  it('PUT takes whole tokens of 0 or more or null, leaves what it does not name, and refuses anything else with a clear 400', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    expect((await putLimits(userId, { daily: 20, monthly: 300 })).body).toMatchObject({
      daily: { limit: 20, source: 'user' },
      monthly: { limit: 300, source: 'user' },
    });
    // Idempotent: the same body again changes nothing; a field left out is unchanged.
    expect((await putLimits(userId, { daily: 20 })).body).toMatchObject({
      daily: { limit: 20 },
      monthly: { limit: 300 },
    });
    expect((await putLimits(userId, {})).body).toMatchObject({ daily: { limit: 20 }, monthly: { limit: 300 } });
    for (const [body, message] of [
      [{ daily: -1 }, 'daily: must be a whole number of tokens, 0 or more, or null (the default applies)'],
      [{ monthly: 2.5 }, 'monthly: must be a whole number of tokens, 0 or more, or null (the default applies)'],
      [{ daily: '10' }, 'daily: must be a whole number of tokens, 0 or more, or null (the default applies)'],
      [{ weekly: 10 }, 'unknown field "weekly"'],
    ] as const) {
      expect(await putLimits(userId, body)).toEqual({
        status: 400,
        body: { error: { code: 'invalid_request', message } },
      });
    }
    // 0: nothing may be spent; null: the user's own limit removed (no default in this stack).
    expect((await putLimits(userId, { daily: 0 })).status).toBe(200);
    expect(await debit(userId, 1, 'zero')).toMatchObject(refusal('daily', { limit: 0, requested: 1 }));
    expect((await putLimits(userId, { daily: null })).body).toMatchObject({
      daily: { limit: null, source: 'none' },
      monthly: { limit: 300, source: 'user' },
    });
    expect((await debit(userId, 1, 'unlimited')).status).toBe(201);
    // check agrees with the next spend.
    await putLimits(userId, { monthly: 1 });
    expect((await stack.apiRequest(`/v1/users/${userId}/check?amount=1`).then(answerOf)).body).toMatchObject({
      allowed: false,
      spendLimit: { period: 'monthly', limit: 1, spent: 1, requested: 1 },
    });
    expect((await debit(userId, 1, 'checked')).status).toBe(402);
  });
});

describe('spend limit defaults (SPEND_LIMIT_DAILY, SPEND_LIMIT_MONTHLY)', () => {
  const stack = suiteStack({ spendLimits: { daily: 30, monthly: 200 } });
  verifyLedgerAfterEach(stack);

  it('apply to a user without a limit of their own; the own limit wins; null gives the default back', async () => {
    const userId = stripeId('user');
    await grantOverApi(stack, userId, 500);
    const limits = async () => (await stack.apiRequest(`/v1/users/${userId}/limits`).then(answerOf)).body;
    expect(await limits()).toMatchObject({
      daily: { limit: 30, source: 'default', spent: 0 },
      monthly: { limit: 200, source: 'default', spent: 0 },
    });
    const debit = (amount: number, reference: string) =>
      postAnswer(stack, `/v1/users/${userId}/debits`, { amount, reference });
    expect((await debit(30, 'd-1')).status).toBe(201);
    expect(await debit(1, 'd-2')).toMatchObject({ status: 402, body: { period: 'daily', limit: 30, spent: 30 } });
    const put = (body: Json) => stack.apiRequest(`/v1/users/${userId}/limits`, { method: 'PUT', body }).then(answerOf);
    expect((await put({ daily: 100 })).body).toMatchObject({ daily: { limit: 100, source: 'user', spent: 30 } });
    expect((await debit(1, 'd-3')).status).toBe(201);
    expect((await put({ daily: null })).body).toMatchObject({ daily: { limit: 30, source: 'default', spent: 31 } });
    expect((await debit(1, 'd-4')).status).toBe(402);
  });
});
