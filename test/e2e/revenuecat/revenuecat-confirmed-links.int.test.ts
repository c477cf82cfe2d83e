import { findWallet } from '@tally/billing-core';
import { processOne } from '../../support/engine';
import { revenueCatTokenPurchase } from '../../support/events';
import { daysFromNow } from '../../support/fakes/fake-revenuecat';
import { ledgerColumns, ledgerOf } from '../../support/ledger';
import { revenueCatSubscriptionEvent } from '../../support/revenuecat-events';
import { suiteStack, suiteStackWithFakeRevenueCat } from '../../support/suite';

const columns = [...ledgerColumns, 'inbox_event_id'] as const;

/**
 * Ids are linked only from what RevenueCat's REST read confirms (the id read and the read's
 * `original_app_user_id`), never from a webhook body's `original_app_user_id` or `aliases`: with
 * a leaked Authorization value, a forged body naming a victim's genuine purchase or subscription
 * together with the attacker's id must not link the victim to the attacker, and so must not move
 * the victim's credit or plan to the attacker's wallet. Verification on (the production default);
 * events stored through the real ingest, processed by the engine against the fake RevenueCat over
 * HTTP.
 */
describe('RevenueCat links only the ids its REST read confirms', () => {
  const { stack, fake } = suiteStackWithFakeRevenueCat({ verifyRevenueCatPurchases: true });

  async function run(body: string) {
    expect((await stack.postRevenueCat(body)).status).toBe(200);
    const row = await stack.inboxRow('revenuecat', JSON.parse(body).event.id);
    const result = await processOne(stack.processorDeps(), row.id);
    return { id: row.id, result };
  }
  const aliasesOf = (ids: string[]) =>
    stack.db
      .selectFrom('user_aliases')
      .select(['alias', 'user_id'])
      .where('alias', 'in', ids)
      .orderBy('alias')
      .execute();

  /** An attacker who is a user already, linked to itself by a genuine pack of its own. */
  async function knownAttacker(attacker: string) {
    fake.addNonSubscription(attacker, 'tokens.100', `tx-own-${attacker}`);
    const own = await run(
      revenueCatTokenPurchase({ id: `rc-own-${attacker}`, userId: attacker, transactionId: `tx-own-${attacker}` }),
    );
    expect(own.result).toMatchObject({ kind: 'processed', code: 'credited' });
    return own.id;
  }

  it.each([
    ['aliases', 'link-victim-a', 'link-attacker-a', (attacker: string) => ({ aliases: [attacker] })],
    [
      'original_app_user_id',
      '$RCAnonymousID:00000000000f0b01',
      'link-attacker-b',
      (attacker: string) => ({ originalAppUserId: attacker }),
    ],
  ])(
    "a forged pack naming a victim's real, uncredited store transaction with the attacker in %s credits the victim and links nothing to the attacker",
    async (_field, victim, attacker, forgedIds) => {
      const ownId = await knownAttacker(attacker);
      // The victim's genuine purchase: RevenueCat lists it, Tally has not credited it yet.
      fake.addNonSubscription(victim, 'tokens.100', `tx-real-${attacker}`);
      const forged = await run(
        revenueCatTokenPurchase({
          id: `rc-forged-${attacker}`,
          userId: victim,
          transactionId: `tx-real-${attacker}`,
          ...forgedIds(attacker),
        }),
      );
      expect(forged.result).toMatchObject({ kind: 'processed', code: 'credited' });
      // RevenueCat's own webhook of the purchase, arriving after: the transaction is credited.
      const genuine = await run(
        revenueCatTokenPurchase({ id: `rc-genuine-${attacker}`, userId: victim, transactionId: `tx-real-${attacker}` }),
      );
      expect(genuine.result).toMatchObject({ kind: 'ignored', code: 'transaction_already_credited' });

      expect(await ledgerOf(stack.db, victim, columns)).toEqual([
        {
          reference: `revenuecat:event:rc-forged-${attacker}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
          inbox_event_id: forged.id,
        },
      ]);
      expect(await ledgerOf(stack.db, attacker, columns)).toEqual([
        {
          reference: `revenuecat:event:rc-own-${attacker}`,
          amount: 100,
          balance_before: 0,
          balance_after: 100,
          reason: 'token_pack_purchase',
          inbox_event_id: ownId,
        },
      ]);
      expect(await findWallet(stack.db, attacker)).toEqual({ userId: attacker, balance: 100 });
      expect(await aliasesOf([victim, attacker])).toEqual(
        [
          { alias: attacker, user_id: attacker },
          { alias: victim, user_id: victim },
        ].sort((a, b) => (a.alias < b.alias ? -1 : 1)),
      );
      expect(
        await stack.db
          .selectFrom('revenuecat_pack_transactions')
          .select(['user_id', 'inbox_event_id', 'verified'])
          .where('store_transaction_id', '=', `tx-real-${attacker}`)
          .execute(),
      ).toEqual([{ user_id: victim, inbox_event_id: forged.id, verified: true }]);
    },
  );

  it("a forged subscription event naming a victim's subscription with the attacker among its aliases keeps the plan on the victim and links nothing to the attacker", async () => {
    const victim = 'link-sub-victim';
    const attacker = 'link-sub-attacker';
    await knownAttacker(attacker);
    const expires = daysFromNow(30);
    fake.setSubscriber(victim, { 'premium.monthly': { expires_date: expires, store: 'app_store' } });
    const forged = await run(
      revenueCatSubscriptionEvent({
        id: 'rc-forged-sub',
        userId: victim,
        originalAppUserId: attacker,
        aliases: [victim, attacker],
      }),
    );
    expect(forged.result).toMatchObject({ kind: 'processed', code: 'subscription_synced' });

    const subscriptions = await stack.db
      .selectFrom('subscriptions')
      .select(['user_id', 'status', 'plan_id', 'product_id', 'expires_at'])
      .where('user_id', 'in', [victim, attacker])
      .execute();
    expect(subscriptions).toEqual([
      {
        user_id: victim,
        status: 'active',
        plan_id: 'premium',
        product_id: 'premium.monthly',
        expires_at: new Date(expires),
      },
    ]);
    expect(await aliasesOf([victim, attacker])).toEqual([
      { alias: attacker, user_id: attacker },
      { alias: victim, user_id: victim },
    ]);
  });

  it('links the ids a read confirms: an event under a logged-in id links the anonymous id RevenueCat first knew the customer by', async () => {
    const anonymous = '$RCAnonymousID:00000000000f0b02';
    const known = 'link-confirmed-user';
    fake.setSubscriber(known, {}, [anonymous], { originalAppUserId: anonymous });
    const event = await run(revenueCatSubscriptionEvent({ id: 'rc-confirmed-link', userId: known, aliases: [known] }));
    expect(event.result).toMatchObject({ kind: 'processed', code: 'already_synchronized' });
    expect(await aliasesOf([anonymous, known])).toEqual([
      { alias: anonymous, user_id: known },
      { alias: known, user_id: known },
    ]);
  });
});

/**
 * With verification off (the demo configuration) there is no read to confirm ids: the body alone
 * decides the credit, and it links nothing. A pack credits the wallet its `app_user_id` reaches,
 * never a user the body names only in `original_app_user_id` or `aliases`.
 */
describe('RevenueCat with verification off links no id from a body', () => {
  const stack = suiteStack({ verifyRevenueCatPurchases: false });

  it("a pack naming another user in original_app_user_id and aliases credits its app_user_id's own wallet and links nothing", async () => {
    const buyer = 'demo-link-buyer';
    const other = 'demo-link-other';
    const run = async (body: string) => {
      expect((await stack.postRevenueCat(body)).status).toBe(200);
      const row = await stack.inboxRow('revenuecat', JSON.parse(body).event.id);
      return { id: row.id, result: await processOne(stack.processorDeps(), row.id) };
    };
    const own = await run(revenueCatTokenPurchase({ id: 'rc-demo-other-own', userId: other }));
    expect(own.result).toMatchObject({ kind: 'processed', code: 'credited' });
    const named = await run(
      revenueCatTokenPurchase({
        id: 'rc-demo-named',
        userId: buyer,
        originalAppUserId: other,
        aliases: [other, buyer],
      }),
    );
    expect(named.result).toMatchObject({
      kind: 'processed',
      code: 'credited',
      detail: 'credited 100 tokens (tokens_100)',
    });

    expect(await ledgerOf(stack.db, buyer, columns)).toEqual([
      {
        reference: 'revenuecat:event:rc-demo-named',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: named.id,
      },
    ]);
    expect(await ledgerOf(stack.db, other, columns)).toEqual([
      {
        reference: 'revenuecat:event:rc-demo-other-own',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: own.id,
      },
    ]);
    expect(
      await stack.db
        .selectFrom('user_aliases')
        .select(['alias', 'user_id'])
        .where('alias', 'in', [buyer, other])
        .orderBy('alias')
        .execute(),
    ).toEqual([
      { alias: buyer, user_id: buyer },
      { alias: other, user_id: other },
    ]);
  });
});
