import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import { InsufficientBalanceError } from '../errors';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { plainLots, postLedgerEntry } from './post-ledger-entry';
import { findWallet, listLedgerEntries } from './read-wallet';
import { verifyLedger } from './verify-ledger';

describe('the ledger', () => {
  const database = useDatabase(createTestDatabase);

  const post = (userId: string, reference: string, amount: number) =>
    inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      postLedgerEntry(uow, { userId, reference, amount, reason: 'test', lots: plainLots(amount) }),
    );

  it('keeps the wallet balance equal to the sum of its entries, with before/after balances chained', async () => {
    await post('sum-user', 'test:credit:1', 100);
    await post('sum-user', 'test:credit:2', 50);
    await post('sum-user', 'test:debit:1', -30);
    const page = await listLedgerEntries(database.db, 'sum-user', { limit: 10 });
    expect(
      page.entries.map((entry) => [entry.reference, entry.amount, entry.balance_before, entry.balance_after]),
    ).toEqual([
      ['test:debit:1', -30, 150, 120],
      ['test:credit:2', 50, 100, 150],
      ['test:credit:1', 100, 0, 100],
    ]);
    const sum = page.entries.reduce((total, entry) => total + entry.amount, 0);
    expect(await findWallet(database.db, 'sum-user')).toEqual({ userId: 'sum-user', balance: sum });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('answers already-posted for a second posting with the same reference and changes nothing', async () => {
    const first = await post('ref-user', 'test:once', 70);
    const second = await post('ref-user', 'test:once', 70);
    expect(first.kind).toBe('posted');
    expect(second).toEqual({ kind: 'already-posted', entry: first.entry });
    expect(await findWallet(database.db, 'ref-user')).toEqual({ userId: 'ref-user', balance: 70 });
  });

  it('writes one entry when ten transactions race on the same reference', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => post('race-user', 'test:race', 25)));
    expect(results.filter((result) => result.kind === 'posted')).toHaveLength(1);
    const rows = await database.db
      .selectFrom('ledger_entries')
      .select('amount')
      .where('reference', '=', 'test:race')
      .execute();
    expect(rows).toEqual([{ amount: 25 }]);
    expect(await findWallet(database.db, 'race-user')).toEqual({ userId: 'race-user', balance: 25 });
  });

  it('rejects a debit past zero and leaves the wallet as it was', async () => {
    await post('short-user', 'test:short:credit', 10);
    await expect(post('short-user', 'test:short:debit', -11)).rejects.toBeInstanceOf(InsufficientBalanceError);
    expect(await findWallet(database.db, 'short-user')).toEqual({ userId: 'short-user', balance: 10 });
    const references = await database.db
      .selectFrom('ledger_entries')
      .select('reference')
      .where('user_id', '=', 'short-user')
      .execute();
    expect(references).toEqual([{ reference: 'test:short:credit' }]);
  });

  it('rejects zero and fractional amounts', async () => {
    await expect(post('odd-user', 'test:zero', 0)).rejects.toThrow(RangeError);
    await expect(post('odd-user', 'test:fraction', 1.5)).rejects.toThrow(RangeError);
  });

  describe('database guarantees that hold even for code that bypasses postLedgerEntry', () => {
    beforeAll(() => post('guard-user', 'test:guard:credit', 40));

    it('rejects UPDATE, DELETE and TRUNCATE on ledger entries', async () => {
      await expect(
        sql`UPDATE ledger_entries SET amount = 1000 WHERE reference = 'test:guard:credit'`.execute(database.db),
      ).rejects.toThrow(/append-only \(UPDATE rejected\)/);
      await expect(
        sql`DELETE FROM ledger_entries WHERE reference = 'test:guard:credit'`.execute(database.db),
      ).rejects.toThrow(/append-only \(DELETE rejected\)/);
      await expect(sql`TRUNCATE ledger_entries CASCADE`.execute(database.db)).rejects.toThrow(
        /append-only \(TRUNCATE rejected\)/,
      );
      const row = await database.db
        .selectFrom('ledger_entries')
        .select('amount')
        .where('reference', '=', 'test:guard:credit')
        .executeTakeFirst();
      expect(row).toEqual({ amount: 40 });
    });

    it('rejects changing a wallet balance directly, or creating a wallet with money in it', async () => {
      await expect(
        sql`UPDATE wallets SET balance = 1000000 WHERE user_id = 'guard-user'`.execute(database.db),
      ).rejects.toThrow(/only through ledger entries/);
      await sql`INSERT INTO users (id) VALUES ('rich-user')`.execute(database.db);
      await expect(
        sql`INSERT INTO wallets (user_id, balance) VALUES ('rich-user', 500)`.execute(database.db),
      ).rejects.toThrow(/starts at balance 0/);
      expect(await findWallet(database.db, 'guard-user')).toEqual({ userId: 'guard-user', balance: 40 });
    });

    it('rejects an entry that would take a balance below zero, or that does not start from the wallet balance', async () => {
      await expect(
        sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
            VALUES ('guard-user', 'test:guard:negative', -50, 40, -10, 'test')`.execute(database.db),
      ).rejects.toThrow(/ledger_entries_balance_after_ck/);
      await expect(
        sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
            VALUES ('guard-user', 'test:guard:stale', 5, 0, 5, 'test')`.execute(database.db),
      ).rejects.toThrow(/does not hold/);
      await expect(
        sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
            VALUES ('guard-user', 'test:guard:arith', 5, 40, 50, 'test')`.execute(database.db),
      ).rejects.toThrow(/ledger_entries_arithmetic_ck/);
      expect(await findWallet(database.db, 'guard-user')).toEqual({ userId: 'guard-user', balance: 40 });
      expect(await verifyLedger(database.db)).toMatchObject({ ok: true });
    });
  });
});
