import { failStudioRequest } from '@tally/billing-core';
import { readJson } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent, stripeRefundedCharge } from '../../support/stripe-events';
import { stripeStateOf } from '../../support/stripe-state';
import { suiteStack } from '../../support/suite';

/**
 * A pack refunded while an AI Studio debit is in flight: the take-back finds the debited tokens
 * out of the wallet and records them as its shortfall. If the generation then fails, its refund
 * hands back exactly those tokens; they settle the shortfall (`studio:{id}:refund:recovered`)
 * instead of leaving the user tokens nobody paid for. A debit made after the take-back is not
 * touched. Real ingest, worker and API; the generation's failure is the studio use case the
 * studio consumer and the sweeper call.
 */
describe('a refund while a generation is in flight', () => {
  const stack = suiteStack({ worker: {} });

  const finished = (eventId: string) => stack.finishedInboxRow('stripe', eventId);
  async function buyPack(userId: string) {
    const paymentIntent = stripeId('pi');
    await finished(
      await stack.deliverStripe(
        stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntent, userId, customer: stripeId('cus') }),
        ),
      ),
    );
    return paymentIntent;
  }
  /** A full song (15 tokens once the two free music requests of the day are used). */
  async function startPaidSong(userId: string): Promise<{ id: number; publicId: string }> {
    for (;;) {
      const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
        method: 'POST',
        body: { kind: 'music', full: true, input: { prompt: 'a song' } },
      });
      const body = (await readJson(response)) as { id: string; freeTier: boolean };
      expect(response.status).toBe(202);
      if (!body.freeTier) {
        const row = await stack.db
          .selectFrom('studio_requests')
          .select(['id', 'public_id'])
          .where('public_id', '=', body.id)
          .executeTakeFirstOrThrow();
        return { id: row.id, publicId: row.public_id };
      }
    }
  }
  const failGeneration = (id: number) =>
    failStudioRequest(stack.outboxDeps(), id, { code: 'ai_failed', message: 'test failure' });
  const refundPack = async (paymentIntent: string) =>
    finished(
      await stack.deliverStripe(
        stripeEventBody('charge.refunded', stripeRefundedCharge({ id: stripeId('ch'), paymentIntent })),
      ),
    );
  const ledgerOf = async (userId: string) =>
    (await stripeStateOf(stack.db, userId)).ledger.map((row) => [
      row.reference.replace(/^studio:[^:]+:/, 'studio:').replace(/^stripe:(refund|payment):.*/, 'stripe:$1'),
      row.amount,
      row.balance_after,
      row.reason,
    ]);

  it('settles the shortfall with the refund of a generation that was in flight during the take-back, and keeps every balance explained', async () => {
    const userId = stripeId('user');
    const paymentIntent = await buyPack(userId);
    const song = await startPaidSong(userId);
    expect((await refundPack(paymentIntent)).outcome_detail).toContain('took back 85 of 100 tokens owed');
    expect((await stripeStateOf(stack.db, userId)).payments).toEqual([
      expect.objectContaining({ tokens_refunded: 85, refund_shortfall: 15 }),
    ]);

    expect(await failGeneration(song.id)).toMatchObject({ kind: 'failed', refund: 'refunded' });
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(0);
    expect(await ledgerOf(userId)).toEqual([
      ['stripe:payment', 100, 100, 'token_pack_purchase'],
      ['studio:debit', -15, 85, 'studio_music_full'],
      ['stripe:refund', -85, 0, 'stripe_refund'],
      ['studio:refund', 15, 15, 'studio_refund'],
      ['studio:refund:recovered', -15, 0, 'take_back_recovered'],
    ]);
    expect(state.payments).toEqual([expect.objectContaining({ tokens_refunded: 100, refund_shortfall: 0 })]);
    expect(
      await stack.db
        .selectFrom('take_back_shortfalls')
        .select(['source', 'shortfall', 'recovered'])
        .where('user_id', '=', userId)
        .execute(),
    ).toEqual([{ source: 'stripe_refund', shortfall: 15, recovered: 15 }]);
    // Failing it again (the sweeper racing the consumer) refunds and recovers nothing more.
    expect(await failGeneration(song.id)).toMatchObject({ kind: 'already-settled' });
    expect((await stripeStateOf(stack.db, userId)).balance).toBe(0);
  });

  it('does not touch the refund of a generation debited after the take-back: the shortfall of tokens already consumed is debt the next pack settles, not that refund', async () => {
    const userId = stripeId('user');
    const firstPack = await buyPack(userId);
    // 70 tokens consumed for good (a completed generation, say), then the pack is refunded.
    await stack.postPlainEntry({ userId, reference: `test:spend:${userId}`, amount: -70, reason: 'test_spend' });
    expect((await refundPack(firstPack)).outcome_detail).toContain('shortfall 70');

    // The next pack is a paid credit: it settles the 70 owed first (docs/debt.md), so 30 are left.
    await buyPack(userId);
    const song = await startPaidSong(userId);
    expect(await failGeneration(song.id)).toMatchObject({ kind: 'failed', refund: 'refunded' });
    const state = await stripeStateOf(stack.db, userId);
    expect(state.balance).toBe(30);
    // The refund of the generation debited after the take-back is the user's whole: no recovery
    // follows it (the shortfall was settled by the pack, not by this refund).
    expect(state.ledger.map((row) => row.reason)).toEqual([
      'token_pack_purchase',
      'test_spend',
      'stripe_refund',
      'token_pack_purchase',
      'debt_settled',
      'studio_music_full',
      'studio_refund',
    ]);
    expect(
      await stack.db
        .selectFrom('take_back_shortfalls')
        .select(['shortfall', 'recovered'])
        .where('user_id', '=', userId)
        .execute(),
    ).toEqual([{ shortfall: 70, recovered: 70 }]);
  });
});
