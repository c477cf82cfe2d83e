import { useDatabase } from '@tally/platform/testing';
import { recordInboxEvents } from '../../inbox/record-inbox-events';
import { testOutbox } from '../../testing/test-outbox';
import { createTestDatabase } from '../../testing/test-services';
import { inUnitOfWork } from '../../unit-of-work/unit-of-work';
import { linkUserIdsAndClaimPack } from './claim-pack-transaction';
import { toRevenueCatInboxDraftFromBody } from './revenuecat-event';

/**
 * linkUserIdsAndClaimPack's paths (links and claim in one statement when the ids are all linked,
 * with the link write otherwise, a conflicting claim read on its own) answer what linkUserIds
 * followed by claimPackTransaction would: the canonical user and the row holding the transaction.
 */
describe('linkUserIdsAndClaimPack links as linkUserIds does and claims once per store transaction', () => {
  const database = useDatabase(createTestDatabase);

  let next = 0;
  const inboxEvent = async (userId: string) => {
    next += 1;
    const body = JSON.stringify({
      event: {
        id: `claim-test-${next}`,
        type: 'NON_RENEWING_PURCHASE',
        app_user_id: userId,
        environment: 'PRODUCTION',
      },
    });
    await recordInboxEvents(database.db, [toRevenueCatInboxDraftFromBody(body)]);
    const row = await database.db
      .selectFrom('inbox_events')
      .select('id')
      .where('provider_event_id', '=', `claim-test-${next}`)
      .executeTakeFirstOrThrow();
    return row.id;
  };
  const claim = (ids: string[], transactionId: string, inboxEventId: number) =>
    inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      linkUserIdsAndClaimPack(uow, ids, {
        transactionId,
        productId: 'tokens.100',
        reference: `revenuecat:event:${inboxEventId}`,
        inboxEventId,
        verified: false,
      }),
    );
  const wallets = (userId: string) =>
    database.db.selectFrom('wallets').select(['user_id', 'balance']).where('user_id', '=', userId).execute();
  const aliasesOf = async (userId: string) =>
    (await database.db.selectFrom('user_aliases').select('alias').where('user_id', '=', userId).execute())
      .map((row) => row.alias)
      .sort();

  it('a new user: created with its wallet and links, and the claim made for it', async () => {
    const event = await inboxEvent('claim-new');
    expect(await claim(['claim-new', '$RCAnonymousID:0000000000000c01'], 'tx-claim-1', event)).toEqual({
      userId: 'claim-new',
      holder: { user_id: 'claim-new', inbox_event_id: event, ledger_reference: `revenuecat:event:${event}` },
    });
    expect(await wallets('claim-new')).toEqual([{ user_id: 'claim-new', balance: 0 }]);
    expect(await aliasesOf('claim-new')).toEqual(['$RCAnonymousID:0000000000000c01', 'claim-new']);
  });

  it('ids all linked to one user (one statement): the claim made for that user, whichever id comes first', async () => {
    const event = await inboxEvent('claim-new');
    expect(await claim(['$RCAnonymousID:0000000000000c01', 'claim-new'], 'tx-claim-2', event)).toEqual({
      userId: 'claim-new',
      holder: { user_id: 'claim-new', inbox_event_id: event, ledger_reference: `revenuecat:event:${event}` },
    });
  });

  it('a transaction claimed already: the holder answered, from a linked user or a new one (still linked)', async () => {
    const first = await inboxEvent('claim-new');
    const holder = { user_id: 'claim-new', inbox_event_id: first, ledger_reference: `revenuecat:event:${first}` };
    expect((await claim(['claim-new'], 'tx-claim-3', first)).holder).toEqual(holder);
    // Replayed: the same row.
    expect((await claim(['claim-new'], 'tx-claim-3', first)).holder).toEqual(holder);
    const second = await inboxEvent('claim-new');
    expect((await claim(['claim-new'], 'tx-claim-3', second)).holder).toEqual(holder);
    const third = await inboxEvent('claim-other');
    expect(await claim(['claim-other'], 'tx-claim-3', third)).toEqual({ userId: 'claim-other', holder });
    expect(await wallets('claim-other')).toEqual([{ user_id: 'claim-other', balance: 0 }]);
    expect(await aliasesOf('claim-other')).toEqual(['claim-other']);
  });

  it('a user that exists without links: linked to itself and claimed for, as linkUserIds picks it', async () => {
    const event = await inboxEvent('claim-legacy');
    await database.db.insertInto('users').values({ id: 'claim-legacy' }).execute();
    expect((await claim(['claim-fresh', 'claim-legacy'], 'tx-claim-4', event)).holder.user_id).toBe('claim-legacy');
    expect(await aliasesOf('claim-legacy')).toEqual(['claim-fresh', 'claim-legacy']);
  });

  describe('one id (one statement, seen before or not)', () => {
    it('a user that exists without a link or a wallet: linked to itself, its wallet made, the claim for it', async () => {
      await database.db.insertInto('users').values({ id: 'claim-one-legacy' }).execute();
      const event = await inboxEvent('claim-one-legacy');
      expect(await claim(['claim-one-legacy'], 'tx-one-1', event)).toEqual({
        userId: 'claim-one-legacy',
        holder: { user_id: 'claim-one-legacy', inbox_event_id: event, ledger_reference: `revenuecat:event:${event}` },
      });
      expect(await wallets('claim-one-legacy')).toEqual([{ user_id: 'claim-one-legacy', balance: 0 }]);
      expect(await aliasesOf('claim-one-legacy')).toEqual(['claim-one-legacy']);
    });

    it('an id linked to another user: claimed for that user, nothing written for the id itself', async () => {
      const anonymous = '$RCAnonymousID:0000000000000c02';
      const first = await inboxEvent('claim-one-owner');
      await claim(['claim-one-owner', anonymous], 'tx-one-2', first);
      const event = await inboxEvent(anonymous);
      expect(await claim([anonymous], 'tx-one-3', event)).toEqual({
        userId: 'claim-one-owner',
        holder: { user_id: 'claim-one-owner', inbox_event_id: event, ledger_reference: `revenuecat:event:${event}` },
      });
      expect(await database.db.selectFrom('users').select('id').where('id', '=', anonymous).execute()).toEqual([]);
      expect(await wallets(anonymous)).toEqual([]);
    });

    it('the first two purchases of a new id at once: one user, one wallet, one link, each claim its own', async () => {
      const [a, b] = [await inboxEvent('claim-one-race'), await inboxEvent('claim-one-race')];
      const results = await Promise.all([
        claim(['claim-one-race'], 'tx-one-4', a),
        claim(['claim-one-race'], 'tx-one-5', b),
      ]);
      expect(results.map((result) => result.userId)).toEqual(['claim-one-race', 'claim-one-race']);
      expect(results.map((result) => result.holder.inbox_event_id)).toEqual([a, b]);
      expect(await wallets('claim-one-race')).toEqual([{ user_id: 'claim-one-race', balance: 0 }]);
      expect(await aliasesOf('claim-one-race')).toEqual(['claim-one-race']);
    });
  });
});
