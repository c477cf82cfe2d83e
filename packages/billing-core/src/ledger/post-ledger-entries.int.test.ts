import { useDatabase } from '@tally/platform/testing';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { InsufficientBalanceError, LedgerReferenceConflictError } from '../errors';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';
import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { postLedgerEntries } from './post-ledger-entries';
import { type LedgerPosting, plainLots, postLedgerEntry } from './post-ledger-entry';
import { findWallet, listLedgerEntries } from './read-wallet';
import { verifyLedger } from './verify-ledger';

/**
 * postLedgerEntries: several postings in one unit of work, as postLedgerEntry one after the other
 * would make them, with the postings on distinct wallets in one statement. Which statement wrote
 * an entry is read from its `cmin` (the command of its transaction that inserted it: one INSERT,
 * one cmin; ledger rows are never updated, so it stays readable after the commit).
 */
describe('postLedgerEntries', () => {
  const database = useDatabase(createTestDatabase);

  const credit = (userId: string, reference: string, amount: number): LedgerPosting => ({
    userId,
    reference,
    amount,
    reason: 'test',
    lots: { kind: 'credit', category: 'purchased', expiresAt: null },
  });
  const debit = (userId: string, reference: string, amount: number): LedgerPosting => ({
    userId,
    reference,
    amount: -amount,
    reason: 'test',
    lots: { kind: 'spend' },
  });
  const postOne = (posting: LedgerPosting) =>
    inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) => postLedgerEntry(uow, posting));

  /** The entries' statements: how many distinct commands of their transaction inserted them. */
  async function statementsOf(db: Transaction<DB> | TestDatabase['db'], references: string[]): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      SELECT count(DISTINCT cmin::text)::int AS n FROM ledger_entries WHERE reference = ANY(${references}::text[])`.execute(
      db,
    );
    return rows[0]?.n ?? 0;
  }

  it('posts credits on distinct wallets in one statement, each with its lot and messages as postLedgerEntry would', async () => {
    const users = ['many-a', 'many-b', 'many-c'];
    for (const user of users) await postOne(credit(user, `many:first:${user}`, 50));
    const outbox: AppWebhookOutbox = { lowBalanceThreshold: 40, handOff: undefined };
    const references = users.map((user) => `many:second:${user}`);
    const { results, messageIds } = await inUnitOfWork({ db: database.db, outbox }, async (uow) => ({
      results: await postLedgerEntries(
        uow,
        users.map((user, index) => credit(user, references[index] as string, 10 * (index + 1))),
      ),
      messageIds: [...uow.outbox.messageIds],
    }));
    expect(
      results.map((result) => [
        result.kind,
        result.entry.reference,
        result.entry.balance_before,
        result.entry.balance_after,
      ]),
    ).toEqual([
      ['posted', 'many:second:many-a', 50, 60],
      ['posted', 'many:second:many-b', 50, 70],
      ['posted', 'many:second:many-c', 50, 80],
    ]);
    expect(await statementsOf(database.db, references)).toBe(1);
    for (const [index, user] of users.entries()) {
      expect(await findWallet(database.db, user)).toEqual({ userId: user, balance: 60 + 10 * index });
    }
    // Each credit's lot, created by the statement (the wallets' lots matched their balances).
    const lots = await database.db
      .selectFrom('credit_lots')
      .select(['user_id', 'source', 'amount', 'remaining', 'category'])
      .where('source', 'in', references)
      .orderBy('source')
      .execute();
    expect(lots).toEqual(
      users.map((user, index) => ({
        user_id: user,
        source: `many:second:${user}`,
        amount: 10 * (index + 1),
        remaining: 10 * (index + 1),
        category: 'purchased',
      })),
    );
    // One wallet.credited per entry, each naming its own entry, recorded in the unit for the hand-off.
    const messages = await database.db
      .selectFrom('app_webhook_messages as m')
      .innerJoin('ledger_entries as e', 'e.id', 'm.ledger_entry_id')
      .select(['m.id', 'm.type', 'm.user_id', 'e.reference', sql<number>`(m.data->>'balanceAfter')::int`.as('after')])
      .where('e.reference', 'in', references)
      .orderBy('m.id')
      .execute();
    expect(messages.map(({ type, user_id, reference, after }) => [type, user_id, reference, after])).toEqual([
      ['wallet.credited', 'many-a', 'many:second:many-a', 60],
      ['wallet.credited', 'many-b', 'many:second:many-b', 70],
      ['wallet.credited', 'many-c', 'many:second:many-c', 80],
    ]);
    expect(messageIds).toEqual(messages.map((message) => message.id));
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it("keeps one wallet's postings in order, creates a missing wallet and answers a replay as postLedgerEntry does", async () => {
    await postOne(credit('order-a', 'order:seed', 100));
    await postOne(credit('order-c', 'order:replayed', 30));
    const postings = [
      credit('order-a', 'order:a1', 5),
      credit('order-b', 'order:b1', 7), // no wallet yet
      debit('order-a', 'order:a2', 40),
      credit('order-c', 'order:replayed', 30), // already posted
      credit('order-a', 'order:a3', 1),
    ];
    const results = await inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      postLedgerEntries(uow, postings),
    );
    expect(results.map((result) => [result.kind, result.entry.reference, result.entry.balance_after])).toEqual([
      ['posted', 'order:a1', 105],
      ['posted', 'order:b1', 7],
      ['posted', 'order:a2', 65],
      ['already-posted', 'order:replayed', 30],
      ['posted', 'order:a3', 66],
    ]);
    const page = await listLedgerEntries(database.db, 'order-a', { limit: 10 });
    expect(page.entries.map((entry) => [entry.reference, entry.balance_before, entry.balance_after])).toEqual([
      ['order:a3', 65, 66],
      ['order:a2', 105, 65],
      ['order:a1', 100, 105],
      ['order:seed', 0, 100],
    ]);
    // A wallet's postings never share a statement: order-a's three took three, in order.
    expect(await statementsOf(database.db, ['order:a1', 'order:a2', 'order:a3'])).toBe(3);
    expect(await findWallet(database.db, 'order-b')).toEqual({ userId: 'order-b', balance: 7 });
    expect(await findWallet(database.db, 'order-c')).toEqual({ userId: 'order-c', balance: 30 });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('throws what postLedgerEntry throws (a debit past zero, a reference of another user), and the unit keeps nothing', async () => {
    await postOne(credit('throw-a', 'throw:seed', 10));
    await postOne(credit('throw-other', 'throw:taken', 10));
    const attempt = (postings: LedgerPosting[]) =>
      inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) => postLedgerEntries(uow, postings));
    await expect(
      attempt([credit('throw-b', 'throw:b1', 5), debit('throw-a', 'throw:a1', 11), credit('throw-c', 'throw:c1', 5)]),
    ).rejects.toBeInstanceOf(InsufficientBalanceError);
    await expect(
      attempt([credit('throw-b', 'throw:b2', 5), credit('throw-a', 'throw:taken', 10)]),
    ).rejects.toBeInstanceOf(LedgerReferenceConflictError);
    const written = await database.db
      .selectFrom('ledger_entries')
      .select('reference')
      .where('reference', 'in', ['throw:b1', 'throw:a1', 'throw:c1', 'throw:b2'])
      .execute();
    expect(written).toEqual([]);
    expect(await findWallet(database.db, 'throw-a')).toEqual({ userId: 'throw-a', balance: 10 });
  });

  it('keeps nothing of a call whose posting throws even when the caller catches the error and commits, and the unit stays usable', async () => {
    await postOne(credit('caught-a', 'caught:seed', 10));
    await postOne(credit('caught-other', 'caught:taken', 10));
    const outbox: AppWebhookOutbox = { lowBalanceThreshold: undefined, handOff: undefined };
    const { errors, messageIds } = await inUnitOfWork({ db: database.db, outbox }, async (uow) => {
      const caught: unknown[] = [];
      // The first round (b, a, c on distinct wallets) is one statement; a's conflict is found after it.
      for (const postings of [
        [
          credit('caught-b', 'caught:b1', 5),
          credit('caught-a', 'caught:taken', 10),
          credit('caught-c', 'caught:c1', 5),
        ],
        // Two rounds (a twice): the first round posts, the second throws (a debit past zero).
        [credit('caught-d', 'caught:d1', 5), credit('caught-a', 'caught:a1', 1), debit('caught-a', 'caught:a2', 50)],
      ]) {
        await postLedgerEntries(uow, postings).catch((error: unknown) => caught.push(error));
      }
      // The transaction is still usable after the caught errors.
      await postLedgerEntry(uow, credit('caught-a', 'caught:after', 3));
      return { errors: caught, messageIds: [...uow.outbox.messageIds] };
    });
    expect(errors.map((error) => (error as Error).constructor.name)).toEqual([
      'LedgerReferenceConflictError',
      'InsufficientBalanceError',
    ]);
    const written = await database.db
      .selectFrom('ledger_entries')
      .select(['reference', 'balance_after'])
      .where('user_id', 'like', 'caught-%')
      .orderBy('id')
      .execute();
    expect(written).toEqual([
      { reference: 'caught:seed', balance_after: 10 },
      { reference: 'caught:taken', balance_after: 10 },
      { reference: 'caught:after', balance_after: 13 },
    ]);
    const lots = await database.db
      .selectFrom('credit_lots')
      .select('source')
      .where('user_id', 'in', ['caught-b', 'caught-c', 'caught-d'])
      .execute();
    expect(lots).toEqual([]);
    const messages = await database.db
      .selectFrom('app_webhook_messages')
      .select(['id', 'user_id'])
      .where('user_id', 'like', 'caught-%')
      .where('id', 'in', messageIds.length > 0 ? messageIds : [0])
      .execute();
    // The unit remembers only the messages that were committed: the one of `caught:after`.
    expect(messages.map((m) => m.user_id)).toEqual(['caught-a']);
    expect(messageIds).toHaveLength(1);
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('refuses a zero or fractional amount before writing anything', async () => {
    await expect(
      inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
        postLedgerEntries(uow, [credit('zero-a', 'zero:a', 5), { ...credit('zero-b', 'zero:b', 1), amount: 0 }]),
      ),
    ).rejects.toBeInstanceOf(RangeError);
    const written = await database.db
      .selectFrom('ledger_entries')
      .select('reference')
      .where('user_id', 'like', 'zero-%')
      .execute();
    expect(written).toEqual([]);
  });

  it('posts plain debits of several wallets together too (lots drawn after the shared statement)', async () => {
    for (const user of ['spend-a', 'spend-b'])
      await postOne({ ...credit(user, `spend:seed:${user}`, 20), lots: plainLots(20) });
    const results = await inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      postLedgerEntries(uow, [debit('spend-a', 'spend:a', 5), debit('spend-b', 'spend:b', 20)]),
    );
    expect(results.map((result) => [result.kind, result.entry.balance_after])).toEqual([
      ['posted', 15],
      ['posted', 0],
    ]);
    expect(await statementsOf(database.db, ['spend:a', 'spend:b'])).toBe(1);
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
