import { createDb, type Database } from '@tally/platform/db';
import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import type { DB } from '../db/schema';
import { InsufficientBalanceError } from '../errors';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase, type TestDatabase, useDatabaseMigratedBefore } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { postGiveBack } from './give-back-tokens';
import type { LotMovement } from './lots';
import { openMissingLots } from './open-missing-lots';
import { postLedgerEntry } from './post-ledger-entry';
import { listLedgerEntries, listLots } from './read-wallet';
import { verifyLedger } from './verify-ledger';

type Db = TestDatabase['db'];

const post = (db: Db, userId: string, reference: string, amount: number, lots: LotMovement) =>
  inUnitOfWork({ db, outbox: testOutbox }, (uow) =>
    postLedgerEntry(uow, { userId, reference, amount, reason: 'test', lots }),
  );

const purchased: LotMovement = { kind: 'credit', category: 'purchased', expiresAt: null };
const subscription = (expiresAt: Date | null): LotMovement => ({ kind: 'credit', category: 'subscription', expiresAt });
const promotional = (expiresAt: Date | null): LotMovement => ({ kind: 'credit', category: 'promotional', expiresAt });

const lotsOf = async (db: Db, userId: string) =>
  (
    await db
      .selectFrom('credit_lots')
      .select(['id', 'category', 'source', 'amount', 'remaining', 'expires_at'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute()
  ).map((lot) => ({ ...lot, expires_at: lot.expires_at?.toISOString() ?? null }));

const drawsOf = async (db: Db, reference: string) =>
  (
    await sql<{ source: string; amount: number }>`
      SELECT l.source, d.amount::int AS amount FROM ledger_draws d
        JOIN ledger_entries e ON e.id = d.ledger_entry_id JOIN credit_lots l ON l.id = d.lot_id
       WHERE e.reference = ${reference} ORDER BY l.id`.execute(db)
  ).rows;

describe('credit lots: every credit creates a lot, every debit draws in the fixed order', () => {
  const database = useDatabase(createTestDatabase);

  it('draws soonest expiry first, then promotional before subscription before purchased, then oldest, never an expired lot', async () => {
    const db = database.db;
    const soon = new Date(Date.now() + 3_600_000);
    const later = new Date(Date.now() + 7_200_000);
    await post(db, 'order-user', 'test:order:pack', 10, purchased);
    await post(db, 'order-user', 'test:order:sub-later', 10, subscription(later));
    await post(db, 'order-user', 'test:order:promo-never', 10, promotional(null));
    await post(db, 'order-user', 'test:order:sub-soon', 10, subscription(soon));
    await post(db, 'order-user', 'test:order:promo-soon', 10, promotional(soon));
    await post(db, 'order-user', 'test:order:expired', 10, subscription(new Date(Date.now() - 1_000)));
    await post(db, 'order-user', 'test:order:spend', -45, { kind: 'spend' });
    // Drawn promo-soon, sub-soon (same expiry: promotional first), sub-later, promo-never, then 5 of
    // the pack; never the expired lot (listed here in lot id order).
    expect(await drawsOf(db, 'test:order:spend')).toEqual([
      { source: 'test:order:pack', amount: 5 },
      { source: 'test:order:sub-later', amount: 10 },
      { source: 'test:order:promo-never', amount: 10 },
      { source: 'test:order:sub-soon', amount: 10 },
      { source: 'test:order:promo-soon', amount: 10 },
    ]);
    // The expired lot's 10 tokens are in the balance (15) but not spendable: 5 spendable, 6 refused.
    await expect(post(db, 'order-user', 'test:order:too-much', -6, { kind: 'spend' })).rejects.toBeInstanceOf(
      InsufficientBalanceError,
    );
    expect((await listLots(db, 'order-user')).map((lot) => [lot.source, lot.remaining])).toEqual([
      ['test:order:expired', 10],
      ['test:order:pack', 5],
    ]);
    expect((await listLedgerEntries(db, 'order-user', { limit: 1 })).entries[0]?.draws).toHaveLength(5);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('a take-back takes from its own lot first; a give-back returns to the lots the debit drew from, an expired one included, its expiry unchanged', async () => {
    const db = database.db;
    const soon = new Date(Date.now() + 3_600_000);
    await post(db, 'back-user', 'test:back:pack', 50, purchased);
    await post(db, 'back-user', 'test:back:sub', 30, subscription(soon));
    await post(db, 'back-user', 'test:back:refund', -20, { kind: 'take-back', fromLotOf: 'test:back:pack' });
    expect(await drawsOf(db, 'test:back:refund')).toEqual([{ source: 'test:back:pack', amount: 20 }]);
    await post(db, 'back-user', 'test:back:spend', -40, { kind: 'spend' });
    expect(await drawsOf(db, 'test:back:spend')).toEqual([
      { source: 'test:back:pack', amount: 10 },
      { source: 'test:back:sub', amount: 30 },
    ]);
    // The subscription lot expires before the give-back (as if its period ended meanwhile).
    const expired = new Date(Date.now() - 1_000);
    await db.updateTable('credit_lots').set({ expires_at: expired }).where('source', '=', 'test:back:sub').execute();
    await post(db, 'back-user', 'test:back:giveback', 40, { kind: 'give-back', of: 'test:back:spend' });
    expect(await drawsOf(db, 'test:back:giveback')).toEqual([
      { source: 'test:back:pack', amount: 10 },
      { source: 'test:back:sub', amount: 30 },
    ]);
    expect(await lotsOf(db, 'back-user')).toEqual([
      expect.objectContaining({ source: 'test:back:pack', amount: 50, remaining: 30, expires_at: null }),
      expect.objectContaining({
        source: 'test:back:sub',
        amount: 30,
        remaining: 30,
        expires_at: expired.toISOString(),
      }),
    ]);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it("a partial give-back returns to the lots in the order they were drawn: a reinstatement to its payment's own lot first", async () => {
    const db = database.db;
    // An older promotional lot (smaller id) and the payment's lot after it.
    await post(db, 'order-back', 'test:back:promo', 10, promotional(null));
    await post(db, 'order-back', 'stripe:payment:pi_back', 20, purchased);
    // The chargeback takes from the payment's lot first (20), then the promotional one (5).
    await post(db, 'order-back', 'stripe:dispute:dp_back', -25, {
      kind: 'take-back',
      fromLotOf: 'stripe:payment:pi_back',
    });
    expect(await drawsOf(db, 'stripe:dispute:dp_back')).toEqual([
      { source: 'test:back:promo', amount: 5 },
      { source: 'stripe:payment:pi_back', amount: 20 },
    ]);
    // Reinstated after a partial refund: 18 come back, all to the payment's lot (its draw came first).
    await inUnitOfWork({ db, outbox: testOutbox }, (uow) =>
      postGiveBack(uow, {
        userId: 'order-back',
        reference: 'stripe:dispute:dp_back:reinstated',
        amount: 18,
        reason: 'test',
        of: 'stripe:dispute:dp_back',
      }),
    );
    expect(await drawsOf(db, 'stripe:dispute:dp_back:reinstated')).toEqual([
      { source: 'stripe:payment:pi_back', amount: 18 },
    ]);
    expect((await lotsOf(db, 'order-back')).map((lot) => [lot.source, lot.remaining])).toEqual([
      ['test:back:promo', 5],
      ['stripe:payment:pi_back', 18],
    ]);
  });

  it('ten concurrent debits against lots that expire at that instant leave every invariant true', async () => {
    const db = database.db;
    await post(db, 'race-lots', 'test:race:pack', 50, purchased);
    await post(db, 'race-lots', 'test:race:sub', 50, subscription(new Date(Date.now() + 150)));
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => post(db, 'race-lots', `test:race:spend:${i}`, -9, { kind: 'spend' })),
    );
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(InsufficientBalanceError);
    }
    const posted = results.filter((result) => result.status === 'fulfilled').length;
    const wallet = await db
      .selectFrom('wallets')
      .select('balance')
      .where('user_id', '=', 'race-lots')
      .executeTakeFirst();
    expect(wallet?.balance).toBe(100 - 9 * posted);
    expect(posted).toBeGreaterThanOrEqual(5);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('the database refuses a wallet whose lots do not hold its balance, at commit', async () => {
    const db = database.db;
    await post(db, 'guard-lots', 'test:guard-lots:pack', 10, purchased);
    await expect(
      db.updateTable('credit_lots').set({ remaining: 9 }).where('source', '=', 'test:guard-lots:pack').execute(),
    ).rejects.toThrow(/lots hold 9/);
    await expect(
      db.updateTable('credit_lots').set({ remaining: 11 }).where('source', '=', 'test:guard-lots:pack').execute(),
    ).rejects.toThrow(/credit_lots_remaining_ck/);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });

    // A debit whose draws do not add up to its amount is named by ledger verify.
    await post(db, 'guard-lots', 'test:guard-lots:promo', 5, promotional(null));
    const spent = await post(db, 'guard-lots', 'test:guard-lots:spend', -3, { kind: 'spend' });
    const packLot = await db
      .selectFrom('credit_lots')
      .select('id')
      .where('source', '=', 'test:guard-lots:pack')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('ledger_draws')
      .values({ ledger_entry_id: spent.entry.id, lot_id: packLot.id, amount: 1 })
      .execute();
    expect((await verifyLedger(db)).discrepancies).toEqual([
      {
        userId: 'guard-lots',
        problem: 'draws_differ_from_amount',
        detail: 'debit test:guard-lots:spend of 3 drew 4 from lots',
      },
    ]);
  });
});

describe('migration 0027 on a database with balances', () => {
  // The pool on the migrated database closes (hooks run in order) before the database is dropped.
  let database: Database<DB> | undefined;
  afterAll(async () => {
    await database?.close();
  });
  // A database of the release before lots: migrated to 0026.
  const migrated = useDatabaseMigratedBefore('0027');

  it('opens a never-expiring purchased lot lazily per wallet, and old-code inserts after it never fail', async () => {
    expect(migrated.applied).toContain('0026_one_partial_refund_code');
    expect(migrated.applied).not.toContain('0027_credit_lots');
    const { client } = migrated;
    const oldCodeEntry = (userId: string, reference: string, amount: number) =>
      client.query(
        `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
         SELECT user_id, $2, $3, balance, balance + $3, 'old_code' FROM wallets WHERE user_id = $1`,
        [userId, reference, amount],
      );
    await client.query(`INSERT INTO users (id) VALUES ('old-a'), ('old-b')`);
    await client.query(`INSERT INTO wallets (user_id) VALUES ('old-a'), ('old-b')`);
    await oldCodeEntry('old-a', 'test:old:a1', 120);
    await oldCodeEntry('old-a', 'test:old:a2', -20);
    await oldCodeEntry('old-b', 'test:old:b1', 40);

    const after = await migrated.migrateRest();
    // 0027 first, then the migrations that landed after it (0028: expiry).
    expect(after.applied[0]).toBe('0027_credit_lots');
    database = createDb<DB>({ connectionString: migrated.url, maxConnections: 4 });
    const db = database.db;
    // Before any posting: ledger verify names the wallets without their opening lot.
    expect((await verifyLedger(db)).discrepancies.map((d) => [d.userId, d.problem])).toEqual([
      ['old-a', 'lots_differ_from_balance'],
      ['old-b', 'lots_differ_from_balance'],
    ]);
    // The batched backfill opens them in short transactions of `batchSize` wallets, until none is left.
    expect([
      await openMissingLots(db, { batchSize: 1 }),
      await openMissingLots(db, { batchSize: 1 }),
      await openMissingLots(db, { batchSize: 1 }),
    ]).toEqual([1, 1, 0]);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });

    await post(db, 'old-a', 'test:new:a-spend', -30, { kind: 'spend' });
    await post(db, 'old-b', 'test:new:b-sub', 10, subscription(null));
    expect(await lotsOf(db, 'old-a')).toEqual([
      expect.objectContaining({ category: 'purchased', source: 'lot:opening:old-a', amount: 100, remaining: 70 }),
    ]);
    expect(await drawsOf(db, 'test:new:a-spend')).toEqual([{ source: 'lot:opening:old-a', amount: 30 }]);
    expect(await lotsOf(db, 'old-b')).toEqual([
      expect.objectContaining({ source: 'lot:opening:old-b', amount: 40, remaining: 40, expires_at: null }),
      expect.objectContaining({ category: 'subscription', source: 'test:new:b-sub', amount: 10, remaining: 10 }),
    ]);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });

    // A replica still on the old code posts without lots: its commits do not fail.
    await oldCodeEntry('old-a', 'test:old:a3', 25);
    await oldCodeEntry('old-b', 'test:old:b2', -45);
    expect((await verifyLedger(db)).discrepancies.map((d) => d.userId)).toEqual(['old-a', 'old-b']);
    // The new code's next posting closes the gap under the wallet lock.
    await post(db, 'old-a', 'test:new:a-pack', 5, purchased);
    await post(db, 'old-b', 'test:new:b-spend', -1, { kind: 'spend' });
    expect(await lotsOf(db, 'old-a')).toEqual([
      expect.objectContaining({ source: 'lot:opening:old-a', amount: 125, remaining: 95 }),
      expect.objectContaining({ source: 'test:new:a-pack', amount: 5, remaining: 5 }),
    ]);
    expect((await lotsOf(db, 'old-b')).map((lot) => lot.remaining)).toEqual([4, 0]);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
