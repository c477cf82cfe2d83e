import { answerOf, postAnswer } from '../../support/requests';
import type { Json } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStack, verifyLedgerAfterEach } from '../../support/suite';

/**
 * `GET /v1/users/{userId}/check` (docs/holds.md "Check"), over HTTP against real Postgres: what it
 * says is what the next debit, hold or studio request then does, the free allowance included.
 */
describe('check before spending', () => {
  const stack = suiteStack();
  beforeEach(() => stack.clock.reset());
  verifyLedgerAfterEach(stack);

  const post = (path: string, body: Json) => postAnswer(stack, path, body);
  const check = async (userId: string, query: string) =>
    answerOf(await stack.apiRequest(`/v1/users/${userId}/check?${query}`));
  const grant = (userId: string, amount: number) =>
    post(`/v1/users/${userId}/grants`, { amount, reference: `g-${stripeId('r')}` });

  it('by amount: allowed exactly when the debit then goes through, holds counted', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    await post(`/v1/users/${userId}/holds`, { amount: 60, reference: 'h1' });
    expect(await check(userId, 'amount=41')).toEqual({
      status: 200,
      body: { allowed: false, amount: 41, balance: 100, held: 60, available: 40 },
    });
    expect((await post(`/v1/users/${userId}/debits`, { amount: 41, reference: 'd41' })).status).toBe(402);
    expect((await post(`/v1/users/${userId}/holds`, { amount: 41, reference: 'h41' })).status).toBe(402);
    expect((await check(userId, 'amount=40')).body).toEqual({
      allowed: true,
      amount: 40,
      balance: 100,
      held: 60,
      available: 40,
    });
    expect((await post(`/v1/users/${userId}/debits`, { amount: 40, reference: 'd40' })).status).toBe(201);
    // Each bad query answered with what is wrong with it.
    const wholeTokens = 'amount: must be a whole number of tokens from 1 to 1000000000';
    for (const [bad, message] of [
      ['amount=0', wholeTokens],
      ['amount=abc', wholeTokens],
      ['amount=1.5', wholeTokens],
      ['amount=1000000001', wholeTokens],
      ['', 'give exactly one of amount, studioKind and feature'],
      ['amount=5&studioKind=image_edit', 'give exactly one of amount, studioKind and feature'],
      ['studioKind=video', 'studioKind: Invalid option: expected one of "image_edit"|"music_clip"|"music_full"'],
      ['amount=5&x=1', 'unknown parameter "x"'],
    ]) {
      expect(await check(userId, bad as string)).toEqual({
        status: 400,
        body: { error: { code: 'invalid_request', message } },
      });
    }
  });

  it('by studio kind: the free allowance first, then the price against what is available; the next request does what check said', async () => {
    const userId = stripeId('user');
    await grant(userId, 7);
    await post(`/v1/users/${userId}/holds`, { amount: 2, reference: 'h' });
    const request = (body: Json) => post(`/v1/users/${userId}/studio/requests`, body);
    // The example catalog: image_edit 5 tokens, 5 free a day; music shares 2 free a day.
    for (let i = 0; i < 5; i += 1) {
      const said = await check(userId, 'studioKind=image_edit');
      expect(said.body).toEqual({
        allowed: true,
        amount: 0,
        balance: 7,
        held: 2,
        available: 5,
        cost: 5,
        freeTier: true,
      });
      const made = await request({ kind: 'image_edit', input: { prompt: `free ${i}` } });
      expect(made.body).toMatchObject({ freeTier: true, tokensCharged: 0 });
    }
    const paid = await check(userId, 'studioKind=image_edit');
    expect(paid.body).toEqual({
      allowed: true,
      amount: 5,
      balance: 7,
      held: 2,
      available: 5,
      cost: 5,
      freeTier: false,
    });
    expect((await request({ kind: 'image_edit', input: { prompt: 'paid' } })).body).toMatchObject({
      freeTier: false,
      tokensCharged: 5,
    });
    const short = await check(userId, 'studioKind=image_edit');
    expect(short.body).toEqual({
      allowed: false,
      amount: 5,
      balance: 2,
      held: 2,
      available: 0,
      cost: 5,
      freeTier: false,
    });
    const refused = await request({ kind: 'image_edit', input: { prompt: 'refused' } });
    expect({ status: refused.status, available: refused.body.available }).toEqual({ status: 402, available: 0 });

    // Music has its own allowance: a full song is free while it lasts, whatever the wallet.
    const song = await check(userId, 'studioKind=music_full');
    expect(song.body).toMatchObject({ allowed: true, amount: 0, cost: 15, freeTier: true });
    expect((await request({ kind: 'music', full: true, input: { prompt: 'song' } })).body).toMatchObject({
      freeTier: true,
    });
    expect((await check(userId, 'studioKind=music_clip')).body).toMatchObject({
      allowed: true,
      cost: 5,
      freeTier: true,
    });
    expect((await request({ kind: 'music', durationSeconds: 10, input: { prompt: 'clip' } })).body).toMatchObject({
      freeTier: true,
    });
    const noMore = await check(userId, 'studioKind=music_clip');
    expect(noMore.body).toMatchObject({ allowed: false, amount: 5, cost: 5, freeTier: false });
    expect((await request({ kind: 'music', durationSeconds: 10, input: { prompt: 'clip 2' } })).status).toBe(402);
  });
});
