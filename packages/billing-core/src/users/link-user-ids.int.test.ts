import { useDatabase } from '@tally/platform/testing';
import { plainLots, postLedgerEntry } from '../ledger/post-ledger-entry';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { linkUserIds, resolveUserId, resolveUserIds } from './link-user-ids';

/** The order of the canonical-user rules, where two of them disagree (the e2e tests cover each rule alone). */
describe('linkUserIds picks one canonical user by rule order, never by id position alone', () => {
  const database = useDatabase(createTestDatabase);

  const link = (ids: string[]) => inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) => linkUserIds(uow, ids));
  const aliasesOf = async (userId: string) =>
    (await database.db.selectFrom('user_aliases').select('alias').where('user_id', '=', userId).execute())
      .map((row) => row.alias)
      .sort();

  it('an id already linked decides, wherever it stands; links are never re-pointed', async () => {
    expect(await link(['rule-owner-a', 'rule-alias-a'])).toBe('rule-owner-a');
    expect(await link(['rule-owner-b', 'rule-alias-b'])).toBe('rule-owner-b');
    // Neither alias is a user, and a named id comes first: the first linked id's user wins, and
    // the other alias keeps its link.
    expect(await link(['rule-new', 'rule-alias-b', 'rule-alias-a'])).toBe('rule-owner-b');
    expect(await resolveUserId(database.db, 'rule-new')).toBe('rule-owner-b');
    expect(await resolveUserId(database.db, 'rule-alias-a')).toBe('rule-owner-a');
    expect(await aliasesOf('rule-owner-b')).toEqual(['rule-alias-b', 'rule-new', 'rule-owner-b']);
    expect(await aliasesOf('rule-owner-a')).toEqual(['rule-alias-a', 'rule-owner-a']);
  });

  it('a user that exists stays canonical even when it is anonymous and a named id comes first (documented limit)', async () => {
    const anonymous = '$RCAnonymousID:00000000000000d1';
    // Credited before linking existed: a user row without any link.
    await inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      postLedgerEntry(uow, {
        userId: anonymous,
        reference: 'test:legacy:d1',
        amount: 10,
        reason: 'test',
        lots: plainLots(10),
      }),
    );
    expect(await link(['rule-named', anonymous])).toBe(anonymous);
    expect(await aliasesOf(anonymous)).toEqual([anonymous, 'rule-named'].sort());
    const users = await database.db.selectFrom('users').select('id').where('id', '=', 'rule-named').execute();
    expect(users).toEqual([]);
  });

  it('without any link or user: the first non-anonymous id, else the first id', async () => {
    expect(await link(['$RCAnonymousID:00000000000000e1', 'rule-fresh-named'])).toBe('rule-fresh-named');
    expect(await link(['$RCAnonymousID:00000000000000e3', '$RCAnonymousID:00000000000000e2'])).toBe(
      '$RCAnonymousID:00000000000000e3',
    );
  });
});

describe('resolveUserIds', () => {
  const database = useDatabase(createTestDatabase);

  it('answers each id by position as resolveUserId would, in one statement: linked, unlinked, repeated, unknown', async () => {
    const link = (ids: string[]) =>
      inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) => linkUserIds(uow, ids));
    expect(await link(['many-owner-1', 'many-anon-1'])).toBe('many-owner-1');
    expect(await link(['many-owner-2', 'many-anon-2'])).toBe('many-owner-2');
    const ids = ['many-anon-2', 'many-owner-1', 'many-unknown', 'many-anon-1', 'many-anon-2', 'many-owner-2'];
    const together = await resolveUserIds(database.db, ids);
    expect(together).toEqual([
      'many-owner-2',
      'many-owner-1',
      'many-unknown',
      'many-owner-1',
      'many-owner-2',
      'many-owner-2',
    ]);
    expect(together).toEqual(await Promise.all(ids.map((id) => resolveUserId(database.db, id))));
    expect(await resolveUserIds(database.db, [])).toEqual([]);
  });
});
