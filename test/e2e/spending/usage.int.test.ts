import { runCli } from '../../support/built-process';
import { ledgerOf } from '../../support/ledger';
import { basicAuth } from '../../support/parked-events';
import { answerOf, grantOverApi, postAnswer } from '../../support/requests';
import type { Json } from '../../support/stack';
import { adminKey } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStack, verifyLedgerAfterEach } from '../../support/suite';

/**
 * Priced usage over HTTP (`POST /v1/users/{userId}/usage`, docs/features.md) against real Postgres,
 * priced by the example catalog's features (video 2 per second; chat per 1,000 tokens of two
 * meters; caption and summary sharing the `text` group's two free uses a day).
 */
describe('usage priced by the catalog', () => {
  const stack = suiteStack();
  verifyLedgerAfterEach(stack);

  const post = (path: string, body: Json, headers: Record<string, string> = {}) =>
    postAnswer(stack, path, body, headers);
  const grant = (userId: string, amount: number) => grantOverApi(stack, userId, amount);
  const use = (userId: string, body: Json, headers: Record<string, string> = {}) =>
    post(`/v1/users/${userId}/usage`, body, headers);

  it('charges each price shape at the catalog price, rounding up, under usage:{reference}', async () => {
    const userId = stripeId('user');
    const lotId = await grant(userId, 100);
    const video = await use(userId, { feature: 'video', quantity: 12, reference: 'clip-1' });
    expect(video).toEqual({
      status: 201,
      body: {
        ledgerReference: 'usage:clip-1',
        feature: 'video',
        variant: null,
        quantities: { second: 12 },
        cost: 24,
        freeTier: false,
        priceVersion: stack.catalog.version,
        balance: 76,
        available: 76,
        draws: [{ lotId, amount: 24 }],
      },
    });
    const chat = await use(userId, {
      feature: 'chat',
      variant: 'large',
      quantities: { input: 1500, output: 100 },
      reference: 'chat-1',
    });
    // (1,500 × 8 + 100 × 24) / 1,000 = 14.4 → 15.
    expect(chat).toMatchObject({
      status: 201,
      body: { cost: 15, balance: 61, quantities: { input: 1500, output: 100 } },
    });
    expect(await use(userId, { feature: 'video', quantity: 0, reference: 'clip-0' })).toMatchObject({
      status: 201,
      body: { cost: 0, balance: 61, draws: [] },
    });
    expect((await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount, e.reason])).toEqual([
      [expect.stringMatching(/^grant:/), 100, 'grant'],
      ['usage:clip-1', -24, 'usage'],
      ['usage:chat-1', -15, 'usage'],
    ]);
  });

  it('answers 400 unknown_feature naming the known ones, 400 for a bad quantity, 402 with cost and available', async () => {
    const userId = stripeId('user');
    await grant(userId, 10);
    const unknown = await use(userId, { feature: 'hologram', reference: 'u-1' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toEqual({
      code: 'unknown_feature',
      message: 'no feature "hologram"; known: caption, chat, image_edit, music_clip, music_full, summary, video',
    });
    expect(
      (await use(userId, { feature: 'chat', variant: 'tiny', quantities: { input: 1 }, reference: 'u-2' })).body.error,
    ).toEqual({
      code: 'unknown_feature',
      message: 'feature chat has no variant "tiny"; known: large, small',
    });
    expect(
      (await use(userId, { feature: 'chat', variant: 'small', quantities: { cached: 1 }, reference: 'u-3' })).body
        .error,
    ).toEqual({
      code: 'unknown_feature',
      message: 'feature chat has no meter "cached"; known: input, output',
    });
    expect((await use(userId, { feature: 'video', quantity: -1, reference: 'u-4' })).body.error.code).toBe(
      'invalid_request',
    );
    expect(await use(userId, { feature: 'video', quantity: 6, reference: 'u-5' })).toEqual({
      status: 402,
      body: {
        error: { code: 'insufficient_balance', message: 'the use costs 12 tokens and the wallet has 10 available' },
        cost: 12,
        available: 10,
      },
    });
  });

  it('charges once under ten concurrent retries of one reference, answering each the same; another body is 409', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    const body = { feature: 'video', quantity: 5, reference: 'retry-1' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => use(userId, body)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    for (const a of answers) expect(a.body).toEqual(answers[0]?.body);
    expect(await use(userId, body, { 'Idempotency-Key': 'usage-k1' })).toEqual({ status: 200, body: answers[0]?.body });
    expect((await use(userId, { ...body, quantity: 6 })).body.error.code).toBe('reference_conflict');
    expect((await ledgerOf(stack.db, userId)).filter((e) => e.reference === 'usage:retry-1')).toHaveLength(1);
  });

  it("shares a group's free uses between its features", async () => {
    const userId = stripeId('user');
    await grant(userId, 20);
    const free = async (feature: string, reference: string) => {
      const result = await use(userId, { feature, reference });
      expect(result.status).toBe(201);
      return [result.body.freeTier, result.body.cost];
    };
    expect(await free('caption', 'f-1')).toEqual([true, 0]);
    expect(await free('summary', 'f-2')).toEqual([true, 0]);
    expect(await free('summary', 'f-3')).toEqual([false, 4]);
    expect(await free('caption', 'f-4')).toEqual([false, 3]);
  });

  it('check agrees with the next usage: free, charged, short, unknown', async () => {
    const userId = stripeId('user');
    await grant(userId, 7);
    const check = async (query: string) => answerOf(await stack.apiRequest(`/v1/users/${userId}/check?${query}`));
    const agree = async (query: string, body: Json) => {
      const checked = await check(query);
      const used = await use(userId, body);
      if (checked.status === 400) {
        expect(used.body.error).toEqual(checked.body.error);
        return checked.body.error.code;
      }
      expect(checked.status).toBe(200);
      expect(checked.body.allowed).toBe(used.status === 201);
      if (used.status === 201)
        expect([checked.body.cost, checked.body.freeTier]).toEqual([used.body.cost, used.body.freeTier]);
      else expect(used.body.cost).toBe(checked.body.cost);
      return [checked.body.allowed, checked.body.cost, checked.body.freeTier];
    };
    expect(await agree('feature=caption', { feature: 'caption', reference: 'k-1' })).toEqual([true, 0, true]);
    expect(await agree('feature=summary', { feature: 'summary', reference: 'k-2' })).toEqual([true, 0, true]);
    expect(await agree('feature=summary', { feature: 'summary', reference: 'k-3' })).toEqual([true, 4, false]);
    expect(
      await agree('feature=chat&variant=small&quantities[input]=1000&quantities[output]=500', {
        feature: 'chat',
        variant: 'small',
        quantities: { input: 1000, output: 500 },
        reference: 'k-4',
      }),
    ).toEqual([true, 2, false]);
    // 1 token left: a 4-token summary is refused by both.
    expect(await agree('feature=summary', { feature: 'summary', reference: 'k-5' })).toEqual([false, 4, false]);
    expect(await agree('feature=nope', { feature: 'nope', reference: 'k-6' })).toBe('unknown_feature');
    expect((await check('feature=video&quantities[bogus]=1')).body.error.code).toBe('unknown_feature');
    expect((await check('amount=1&feature=video')).body.error.code).toBe('invalid_request');
    expect((await check('feature=video&colour=red')).body.error.code).toBe('invalid_request');
  });

  it('holds by estimate over HTTP: captured below, at and above the estimate and past what is available', async () => {
    const userId = stripeId('user');
    await grant(userId, 40);
    const place = (body: Json) => post(`/v1/users/${userId}/holds`, body);
    const capture = (holdId: string, body: Json) => post(`/v1/users/${userId}/holds/${holdId}/capture`, body);
    const estimate = await place({ feature: 'video', quantity: 10, reference: 'render-1' });
    expect(estimate).toMatchObject({ status: 201, body: { amount: 20, status: 'held', available: 20 } });
    expect(await place({ feature: 'video', quantity: 10, reference: 'render-1' })).toMatchObject({
      status: 200,
      body: { id: estimate.body.id },
    });
    expect((await place({ feature: 'video', quantity: 11, reference: 'render-1' })).body.error.code).toBe(
      'reference_conflict',
    );
    expect((await capture(estimate.body.id, { amount: 5 })).body.error.code).toBe('invalid_request');
    expect(await capture(estimate.body.id, { quantity: 7 })).toMatchObject({
      status: 200,
      body: { captured: 14, released: 6, cost: 14, quantities: { second: 7 }, excess: 0, debt: 0, balance: 26 },
    });
    const second = await place({ feature: 'video', quantity: 5, reference: 'render-2' });
    // 30 seconds: 10 held, 16 of the 50 excess available, 34 owed; the capture never fails for its price.
    expect(await capture(second.body.id, { quantity: 30 })).toMatchObject({
      status: 200,
      body: { captured: 10, cost: 60, excess: 16, debt: 34, balance: 0, available: 0 },
    });
    const amountHold = await place({ amount: 1, reference: 'plain-1' });
    expect(amountHold.status).toBe(402);
    expect((await place({ amount: 1, feature: 'video', reference: 'both' })).body.error.code).toBe('invalid_request');
    expect((await place({ feature: 'hologram', reference: 'h-1' })).body.error.code).toBe('unknown_feature');
  });

  it('reports uses per UTC day and feature from the kept rows, for a user and across users', async () => {
    const [userA, userB] = [stripeId('user'), stripeId('user')];
    await grant(userA, 100);
    await grant(userB, 100);
    await use(userA, { feature: 'video', quantity: 3, reference: `${userA}-v1` });
    await use(userA, { feature: 'video', quantity: 4, reference: `${userA}-v2` });
    await use(userA, { feature: 'caption', reference: `${userA}-c1` });
    await use(userB, { feature: 'video', quantity: 1, reference: `${userB}-v1` });
    // A hold by estimate counts once captured; a released one never.
    const captured = await post(`/v1/users/${userA}/holds`, {
      feature: 'chat',
      variant: 'small',
      quantities: { input: 1000, output: 0 },
      reference: `${userA}-h1`,
    });
    await post(`/v1/users/${userA}/holds/${captured.body.id}/capture`, { quantities: { input: 2000, output: 500 } });
    const released = await post(`/v1/users/${userA}/holds`, {
      feature: 'video',
      quantity: 2,
      reference: `${userA}-h2`,
    });
    await post(`/v1/users/${userA}/holds/${released.body.id}/release`, {});
    const today = new Date().toISOString().slice(0, 10);
    const report = await answerOf(await stack.apiRequest(`/v1/users/${userA}/usage?from=${today}&to=${today}`));
    expect(report).toEqual({
      status: 200,
      body: {
        userId: userA,
        days: [
          { date: today, feature: 'caption', variant: null, uses: 1, freeUses: 1, quantities: { use: 1 }, tokens: 0 },
          {
            date: today,
            feature: 'chat',
            variant: 'small',
            uses: 1,
            freeUses: 0,
            quantities: { input: 2000, output: 500 },
            tokens: 3,
          },
          { date: today, feature: 'video', variant: null, uses: 2, freeUses: 0, quantities: { second: 7 }, tokens: 14 },
        ],
      },
    });
    const across = await answerOf(await stack.apiRequest(`/admin/usage?from=${today}&to=${today}&feature=video`));
    expect(across.status).toBe(200);
    const video = across.body.days.find((d: Json) => d.feature === 'video');
    expect(video).toMatchObject({ date: today, uses: expect.any(Number), users: expect.any(Number) });
    expect(video.users).toBeGreaterThanOrEqual(2);
    expect(across.body.days.every((d: Json) => d.feature === 'video')).toBe(true);
    // The console shows the user's uses per feature, and the overview the tokens per feature per day.
    const consolePage = async (path: string) =>
      (
        await fetch(`http://127.0.0.1:${stack.api.port}/admin/console${path}`, {
          headers: { authorization: basicAuth('support', adminKey) },
        })
      ).text();
    const userPage = await consolePage(`/users/${userA}`);
    expect(userPage).toContain('Usage per feature (last 30 days)');
    expect(userPage).toMatch(
      /<td>video<\/td>\s*<td><\/td>\s*<td>2<\/td>\s*<td>0<\/td>\s*<td><span class="mono">second 7<\/span><\/td>\s*<td class="num">14<\/td>/,
    );
    const overview = await consolePage('');
    expect(overview).toContain('Tokens spent per feature per day');
    expect(overview).toMatch(/tokens spent on video: \d+ in the last 14 days/);
    // The CLI prints the same report.
    const cli = await runCli(['usage', userA, '--from', today, '--to', today, '--json'], {
      DATABASE_URL: stack.database.url,
    });
    expect({ code: cli.code, report: JSON.parse(cli.stdout) }).toEqual({
      code: 0,
      report: { userId: userA, from: today, to: today, days: report.body.days },
    });
    const refused = await runCli(['usage', userA, '--from', '2031-01-02', '--to', '2031-01-01'], {
      DATABASE_URL: stack.database.url,
    });
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 1, stderr: '--from is after --to\n' });
    for (const bad of [
      'from=2031-01-02&to=2031-01-01',
      'from=2030-01-01&to=2031-01-02',
      'from=today&to=2031-01-01',
      `from=${today}`,
    ]) {
      expect((await answerOf(await stack.apiRequest(`/v1/users/${userA}/usage?${bad}`))).body.error.code).toBe(
        'invalid_request',
      );
    }
  });
});
