import { walletEntryDataSchema } from '@tally/billing-core';
import { ledgerOf, lotsOf } from '../../support/ledger';
import { grantOverApi, postAnswer } from '../../support/requests';
import type { Json } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStack, verifyLedgerAfterEach } from '../../support/suite';

/**
 * App debits (`POST /v1/users/{userId}/debits`, docs/holds.md "Debits"), over HTTP against real
 * Postgres: the reference is the debit's fence, a short wallet is 402 with `available`, held
 * tokens are not spendable.
 */
describe('debits from the app', () => {
  const stack = suiteStack();
  verifyLedgerAfterEach(stack);

  const post = (path: string, body: Json, headers: Record<string, string> = {}) =>
    postAnswer(stack, path, body, headers);
  const grant = (userId: string, amount: number) => grantOverApi(stack, userId, amount);
  const debit = (userId: string, body: Json, headers: Record<string, string> = {}) =>
    post(`/v1/users/${userId}/debits`, body, headers);
  const ledger = async (userId: string) =>
    (await ledgerOf(stack.db, userId)).map((e) => [e.reference, e.amount, e.balance_after, e.reason]);

  it('a debit retried with its reference debits once (with or without an Idempotency-Key); another amount is 409', async () => {
    const userId = stripeId('user');
    const lotId = await grant(userId, 100);
    const first = await debit(userId, { amount: 30, reference: 'boost:42', reason: 'profile_boost' });
    expect(first).toEqual({
      status: 201,
      body: {
        ledgerReference: 'debit:boost:42',
        amount: 30,
        balance: 70,
        available: 70,
        draws: [{ lotId, amount: 30 }],
      },
    });
    expect(await debit(userId, { amount: 30, reference: 'boost:42' })).toEqual({ status: 200, body: first.body });
    const keyed = await debit(userId, { amount: 30, reference: 'boost:42' }, { 'Idempotency-Key': 'debit-k1' });
    expect(keyed).toEqual({ status: 200, body: first.body });
    const conflict = await debit(userId, { amount: 31, reference: 'boost:42' });
    expect({ status: conflict.status, code: conflict.body.error?.code }).toEqual({
      status: 409,
      code: 'reference_conflict',
    });
    // Another user reusing the reference: references are global, a conflict too.
    const stranger = stripeId('user');
    await grant(stranger, 50);
    expect((await debit(stranger, { amount: 30, reference: 'boost:42' })).status).toBe(409);
    for (const bad of [
      { amount: 0, reference: 'x' },
      { amount: -5, reference: 'x' },
      { amount: 2.5, reference: 'x' },
      { amount: 5, reference: '' },
      { amount: 5 },
    ]) {
      expect((await debit(userId, bad)).status).toBe(400);
    }
    expect(await ledger(userId)).toEqual([
      [expect.stringMatching(/^grant:/), 100, 100, 'grant'],
      ['debit:boost:42', -30, 70, 'profile_boost'],
    ]);
    const messages = await stack.db
      .selectFrom('app_webhook_messages')
      .select('data')
      .where('user_id', '=', userId)
      .where('type', '=', 'wallet.debited')
      .execute();
    expect(messages.map((m) => walletEntryDataSchema.parse(m.data))).toEqual([
      expect.objectContaining({ reference: 'debit:boost:42', amount: -30, balanceAfter: 70, reason: 'profile_boost' }),
    ]);
  });

  it('concurrent debits with one reference debit once; a short wallet is 402 with available and debits nothing', async () => {
    const userId = stripeId('user');
    await grant(userId, 50);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => debit(userId, { amount: 20, reference: 'same' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    const short = await debit(userId, { amount: 31, reference: 'too-much' });
    expect(short).toEqual({
      status: 402,
      body: { error: { code: 'insufficient_balance', message: expect.any(String) }, available: 30 },
    });
    expect((await ledger(userId)).slice(1)).toEqual([['debit:same', -20, 30, 'debit']]);
  });

  it('held tokens are not spendable: the 402 says what is available beside the hold', async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    expect((await post(`/v1/users/${userId}/holds`, { amount: 80, reference: 'h' })).status).toBe(201);
    const short = await debit(userId, { amount: 30, reference: 'over-hold' });
    expect({ status: short.status, available: short.body.available }).toEqual({ status: 402, available: 20 });
    const fits = await debit(userId, { amount: 20, reference: 'fits' });
    expect(fits.body).toMatchObject({ balance: 80, available: 0 });
  });
  it('a debit retried after the wallet ran short still answers the first debit (the reference fence comes before the balance)', async () => {
    const userId = stripeId('user');
    await grant(userId, 50);
    const first = await debit(userId, { amount: 40, reference: 'once' });
    expect(first.status).toBe(201);
    // 10 left: the retry of the 40 must not be a 402, and another amount is still the conflict.
    expect(await debit(userId, { amount: 40, reference: 'once' })).toEqual({ status: 200, body: first.body });
    expect((await debit(userId, { amount: 45, reference: 'once' })).status).toBe(409);
    expect((await ledger(userId)).slice(1)).toEqual([['debit:once', -40, 10, 'debit']]);
  });

  it('a debit draws around what a hold reserves, so the capture still finds its lots', async () => {
    const userId = stripeId('user');
    const soon = await post(`/v1/users/${userId}/grants`, {
      amount: 30,
      reference: `g-${stripeId('r')}`,
      expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    const never = await grant(userId, 100);
    // The hold reserves 20 of the soonest-expiring lot, the one a debit takes first: the debit
    // takes its other 10, then the never-expiring lot.
    const held = await post(`/v1/users/${userId}/holds`, { amount: 20, reference: 'reserve' });
    expect(held.status).toBe(201);
    const spent = await debit(userId, { amount: 50, reference: 'around' });
    expect(spent.body).toMatchObject({ balance: 80, available: 60 });
    expect([...spent.body.draws].sort((a: Json, b: Json) => a.lotId - b.lotId)).toEqual([
      { lotId: soon.body.lotId, amount: 10 },
      { lotId: never, amount: 40 },
    ]);
    const captured = await post(`/v1/users/${userId}/holds/${held.body.id}/capture`, {});
    expect(captured).toMatchObject({ status: 200, body: { captured: 20, balance: 60, available: 60 } });
    const lots = await lotsOf(stack.db, userId, ['id', 'remaining']);
    expect(lots).toEqual([
      { id: soon.body.lotId, remaining: 0 },
      { id: never, remaining: 60 },
    ]);
  });
});
