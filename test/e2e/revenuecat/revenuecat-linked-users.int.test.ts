import { revenueCatTokenPurchase } from '../../support/events';
import { ledgerColumns, ledgerOf } from '../../support/ledger';
import { type Json, readJson } from '../../support/stack';
import { suiteStackWithFakeRevenueCat } from '../../support/suite';

/** The ledger columns these tests compare: the usual ones, plus whose entry it is and which event posted it. */
const linkedLedgerColumns = [...ledgerColumns, 'user_id', 'inbox_event_id'] as const;

/**
 * A RevenueCat customer goes by several ids (app_user_id, original_app_user_id, aliases, often a
 * `$RCAnonymousID:…` from before the app logged the user in). A token pack bought under any of
 * them lands on one canonical user, chosen by the rule in linkUserIds, and wallet and ledger reads
 * by any linked id answer for that user. The ids linked are those RevenueCat's REST read confirms
 * (the id read and its `original_app_user_id`; the fake RevenueCat holds each customer's ids), with
 * purchase verification on as in production. Every test here goes through real ingest (authorised
 * webhooks) and the real worker.
 */
describe('RevenueCat linked ids: a pack bought under any id the customer goes by credits one user', () => {
  const { stack, fake: revenueCat } = suiteStackWithFakeRevenueCat({
    verifyRevenueCatPurchases: true,
    revenueCatTimeoutMs: 5_000,
    worker: {},
  });

  /**
   * Delivers a RevenueCat webhook through ingest and waits until the worker finished it. A pack
   * purchase is listed at the fake RevenueCat first (under the customer its app_user_id is an id of).
   */
  const deliver = async (body: string) => {
    const event = JSON.parse(body).event;
    if (event.type === 'NON_RENEWING_PURCHASE') {
      revenueCat.addNonSubscription(event.app_user_id, event.product_id, event.transaction_id);
    }
    const response = await stack.postRevenueCat(body);
    expect(response.status).toBe(200);
    return stack.finishedInboxRow('revenuecat', JSON.parse(body).event.id);
  };
  const walletBy = async (id: string): Promise<Json> => {
    const response = await stack.apiRequest(`/v1/users/${encodeURIComponent(id)}/wallet`);
    expect(response.status).toBe(200);
    // Packs are never-expiring purchased lots, one per credit, that hold the whole balance.
    const { lots, ...wallet } = await readJson(response);
    for (const lot of lots) expect(lot).toMatchObject({ category: 'purchased', expiresAt: null });
    expect(lots.reduce((sum: number, lot: Json) => sum + lot.remaining, 0)).toBe(wallet.balance);
    return wallet;
  };
  const ledgerBy = async (id: string): Promise<Json> => {
    const response = await stack.apiRequest(`/v1/users/${encodeURIComponent(id)}/ledger`);
    expect(response.status).toBe(200);
    return readJson(response);
  };
  /** The ids linked to a user, by alias in code-point order (the database collation may differ). */
  const linksTo = async (userId: string) =>
    (
      await stack.db
        .selectFrom('user_aliases')
        .select(['alias', 'user_id', 'inbox_event_id'])
        .where('user_id', '=', userId)
        .execute()
    ).sort((a, b) => (a.alias < b.alias ? -1 : 1));
  const usersAmong = async (ids: string[]) =>
    (await stack.db.selectFrom('users').select('id').where('id', 'in', ids).execute()).map((user) => user.id).sort();

  it('a pack bought under an anonymous id, naming the known user among its aliases, credits that user; wallet and ledger by the anonymous id answer with its balance', async () => {
    const known = 'linked-known-user';
    const anonymous = '$RCAnonymousID:0000000000000a01';
    const reinstalled = '$RCAnonymousID:0000000000000a02';
    // One RevenueCat customer, first known as `known`: a read by any of its ids answers
    // original_app_user_id `known`.
    revenueCat.setSubscriber(known, {}, [anonymous, reinstalled]);
    // The user the product knows bought a pack before: a user, linked to itself.
    const first = await deliver(revenueCatTokenPurchase({ id: 'rc-linked-first', userId: known }));
    expect(first).toMatchObject({ status: 'processed', outcome_code: 'credited' });

    // A purchase on a device where the app had not logged in yet: RevenueCat names the
    // anonymous id as app_user_id and lists the known id among the aliases.
    const anonymousPurchase = await deliver(
      revenueCatTokenPurchase({
        id: 'rc-linked-anon',
        userId: anonymous,
        originalAppUserId: anonymous,
        aliases: [anonymous, known],
        productId: '2100_tokens',
      }),
    );
    expect(anonymousPurchase).toMatchObject({
      status: 'processed',
      outcome_code: 'credited',
      outcome_detail: 'credited 2100 tokens (tokens_2100, listed by RevenueCat)',
      user_id: anonymous,
    });

    // A later purchase that names only the anonymous id still lands on the known user: the
    // link made by the purchase above decides (rule 1), not the id's own shape.
    const anonymousOnly = await deliver(
      revenueCatTokenPurchase({ id: 'rc-linked-anon-only', userId: anonymous, aliases: [anonymous] }),
    );
    expect(anonymousOnly).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    // After a reinstall the app goes by a new anonymous id; RevenueCat lists the earlier one as an
    // alias. The first id already linked decides, though the new id comes first.
    const reinstall = await deliver(
      revenueCatTokenPurchase({
        id: 'rc-linked-reinstall',
        userId: reinstalled,
        originalAppUserId: anonymous,
        aliases: [reinstalled, anonymous],
      }),
    );
    expect(reinstall).toMatchObject({ status: 'processed', outcome_code: 'credited' });

    expect(await ledgerOf(stack.db, known, linkedLedgerColumns)).toEqual([
      {
        user_id: known,
        reference: 'revenuecat:event:rc-linked-first',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: first.id,
      },
      {
        user_id: known,
        reference: 'revenuecat:event:rc-linked-anon',
        amount: 2100,
        balance_before: 100,
        balance_after: 2200,
        reason: 'token_pack_purchase',
        inbox_event_id: anonymousPurchase.id,
      },
      {
        user_id: known,
        reference: 'revenuecat:event:rc-linked-anon-only',
        amount: 100,
        balance_before: 2200,
        balance_after: 2300,
        reason: 'token_pack_purchase',
        inbox_event_id: anonymousOnly.id,
      },
      {
        user_id: known,
        reference: 'revenuecat:event:rc-linked-reinstall',
        amount: 100,
        balance_before: 2300,
        balance_after: 2400,
        reason: 'token_pack_purchase',
        inbox_event_id: reinstall.id,
      },
    ]);
    // The anonymous id holds nothing of its own: no user row, no wallet, no ledger row.
    expect(await usersAmong([known, anonymous, reinstalled])).toEqual([known]);
    expect(await ledgerOf(stack.db, anonymous)).toEqual([]);
    expect(await ledgerOf(stack.db, reinstalled)).toEqual([]);
    expect(await linksTo(known)).toEqual([
      { alias: anonymous, user_id: known, inbox_event_id: anonymousPurchase.id },
      { alias: reinstalled, user_id: known, inbox_event_id: reinstall.id },
      { alias: known, user_id: known, inbox_event_id: first.id },
    ]);

    expect(await walletBy(anonymous)).toEqual({ userId: anonymous, balance: 2400, held: 0, available: 2400, debt: 0 });
    expect(await walletBy(reinstalled)).toEqual({
      userId: reinstalled,
      balance: 2400,
      held: 0,
      available: 2400,
      debt: 0,
    });
    expect(await walletBy(known)).toEqual({ userId: known, balance: 2400, held: 0, available: 2400, debt: 0 });
    const byAnonymous = await ledgerBy(anonymous);
    expect(byAnonymous).toEqual({ userId: anonymous, entries: expect.any(Array), nextCursor: null });
    expect(byAnonymous.entries.map((entry: Json) => [entry.reference, entry.amount, entry.balanceAfter])).toEqual([
      ['revenuecat:event:rc-linked-reinstall', 100, 2400],
      ['revenuecat:event:rc-linked-anon-only', 100, 2300],
      ['revenuecat:event:rc-linked-anon', 2100, 2200],
      ['revenuecat:event:rc-linked-first', 100, 100],
    ]);
    expect((await ledgerBy(known)).entries).toEqual(byAnonymous.entries);
  });

  it('a pack bought under an old alias as app_user_id credits the user the app already created, though no link names it yet', async () => {
    const known = 'linked-app-user';
    const oldAlias = 'linked-old-login-id';
    // The app knows this user (an AI Studio request on the free allowance made its user row);
    // RevenueCat never sent it, so no link exists.
    const studio = await stack.apiRequest(`/v1/users/${known}/studio/requests`, {
      method: 'POST',
      body: { kind: 'image_edit', input: { prompt: 'a user the app knows' } },
    });
    expect(studio.status).toBe(202);
    expect(await linksTo(known)).toEqual([]);
    expect(await usersAmong([known, oldAlias])).toEqual([known]);

    // RevenueCat's customer goes by both ids (its read by the old id answers original_app_user_id `known`).
    revenueCat.setSubscriber(known, {}, [oldAlias]);
    // The customer logged in under an older id first; RevenueCat names it as app_user_id and the
    // current id among the aliases. The already existing user wins over the first non-anonymous id (rule 2).
    const purchase = await deliver(
      revenueCatTokenPurchase({
        id: 'rc-linked-old-alias',
        userId: oldAlias,
        originalAppUserId: oldAlias,
        aliases: [oldAlias, known],
      }),
    );
    expect(purchase).toMatchObject({ status: 'processed', outcome_code: 'credited', user_id: oldAlias });
    expect(await ledgerOf(stack.db, known, linkedLedgerColumns)).toEqual([
      {
        user_id: known,
        reference: 'revenuecat:event:rc-linked-old-alias',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: purchase.id,
      },
    ]);
    expect(await ledgerOf(stack.db, oldAlias)).toEqual([]);
    expect(await usersAmong([known, oldAlias])).toEqual([known]);
    expect(await linksTo(known)).toEqual([
      { alias: known, user_id: known, inbox_event_id: purchase.id },
      { alias: oldAlias, user_id: known, inbox_event_id: purchase.id },
    ]);
    expect(await walletBy(oldAlias)).toEqual({ userId: oldAlias, balance: 100, held: 0, available: 100, debt: 0 });
    expect((await ledgerBy(oldAlias)).entries).toEqual([
      expect.objectContaining({ reference: 'revenuecat:event:rc-linked-old-alias', amount: 100, balanceAfter: 100 }),
    ]);
  });

  it("a brand-new customer's pack credits its first non-anonymous id; a customer with only anonymous ids becomes a user of its own", async () => {
    const anonymous = '$RCAnonymousID:0000000000000b01';
    const named = 'linked-new-user';
    revenueCat.setSubscriber(named, {}, [anonymous]);
    // Nobody is known: the anonymous id comes first, but the id the product knows wins (rule 3).
    const purchase = await deliver(
      revenueCatTokenPurchase({
        id: 'rc-linked-new',
        userId: anonymous,
        originalAppUserId: anonymous,
        aliases: [anonymous, named],
      }),
    );
    expect(purchase).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect((await ledgerOf(stack.db, named)).map((entry) => [entry.reference, entry.balance_after])).toEqual([
      ['revenuecat:event:rc-linked-new', 100],
    ]);
    expect(await usersAmong([anonymous, named])).toEqual([named]);
    expect(await walletBy(anonymous)).toEqual({ userId: anonymous, balance: 100, held: 0, available: 100, debt: 0 });

    // Only anonymous ids (the app never logged in): the first one becomes the user (rule 4).
    const onlyAnonymous = ['$RCAnonymousID:0000000000000c02', '$RCAnonymousID:0000000000000c01'];
    revenueCat.setSubscriber(onlyAnonymous[1] as string, {}, [onlyAnonymous[0] as string]);
    const anonymousPurchase = await deliver(
      revenueCatTokenPurchase({
        id: 'rc-linked-only-anon',
        userId: onlyAnonymous[0],
        originalAppUserId: onlyAnonymous[1],
        aliases: onlyAnonymous,
      }),
    );
    expect(anonymousPurchase).toMatchObject({ status: 'processed', outcome_code: 'credited' });
    expect(await usersAmong(onlyAnonymous)).toEqual([onlyAnonymous[0]]);
    expect((await linksTo(onlyAnonymous[0] as string)).map((link) => link.alias)).toEqual([...onlyAnonymous].sort());
    expect(await walletBy(onlyAnonymous[1] as string)).toEqual({
      userId: onlyAnonymous[1],
      balance: 100,
      held: 0,
      available: 100,
      debt: 0,
    });
  });
});
