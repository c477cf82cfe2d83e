import { sql } from 'kysely';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { inOutboxTransaction } from '../outbox/outbox-transaction';
import { signal } from '../testing/signal';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';
import { createLedgerTotalsReader, type LedgerTotal, type LedgerTotalsReader } from './ledger-totals';

describe('ledger totals for the metrics scrape', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  let posted = 0;
  const post = (userId: string, amount: number, reason: string) => {
    posted += 1;
    const reference = `test:totals:${posted}`;
    return inOutboxTransaction(database.db, testOutbox, (trx) =>
      postLedgerEntry(trx, { userId, reference, amount, reason }),
    );
  };

  /** The whole ledger grouped, as the scrape once read it at every scrape. */
  const fullScan = async (): Promise<LedgerTotal[]> => {
    const { rows } = await sql<{ direction: 'credit' | 'debit'; reason: string; entries: string; tokens: string }>`
      SELECT CASE WHEN amount > 0 THEN 'credit' ELSE 'debit' END AS direction, reason,
             count(*) AS entries, sum(abs(amount)) AS tokens
        FROM ledger_entries GROUP BY 1, 2`.execute(database.db);
    return sorted(rows.map((row) => ({ ...row, entries: Number(row.entries), tokens: Number(row.tokens) })));
  };
  const sorted = (totals: LedgerTotal[]) =>
    [...totals].sort((a, b) => `${a.direction}${a.reason}`.localeCompare(`${b.direction}${b.reason}`));
  const maxId = async () =>
    Number(
      (await sql<{ max: string }>`SELECT max(id) AS max FROM ledger_entries`.execute(database.db)).rows[0]?.max ?? 0,
    );

  /**
   * Reads until the reader's base reaches the newest entry. xmin is the whole cluster's: another
   * test's open transaction elsewhere on the server holds a fold back (never the totals' truth).
   */
  const readUntilSettled = async (reader: LedgerTotalsReader) => {
    const target = await maxId();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const totals = await reader.read(database.db);
      if (reader.settledThrough >= target) return totals;
      if (Date.now() > deadline) throw new Error(`settled through ${reader.settledThrough}, not ${target}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('matches a GROUP BY over the whole ledger, and after its first fold reads only the newer entries', async () => {
    await post('totals-a', 100, 'token_pack_purchase');
    await post('totals-a', -30, 'studio_music');
    await post('totals-b', 250, 'topup');
    await post('totals-b', 100, 'token_pack_purchase');
    const reader = createLedgerTotalsReader();

    const first = await reader.read(database.db);
    expect(sorted(first)).toEqual(await fullScan());
    expect(reader.lastLiveEntries).toBe(4);

    expect(sorted(await readUntilSettled(reader))).toEqual(await fullScan());
    // Settled: a read sums nothing beyond the base, and still gives the whole ledger's totals.
    expect(sorted(await reader.read(database.db))).toEqual(await fullScan());
    expect(reader.lastLiveEntries).toBe(0);

    await post('totals-a', 40, 'token_pack_purchase');
    await post('totals-b', -10, 'token_pack_refund');
    const later = await reader.read(database.db);
    expect(reader.lastLiveEntries).toBe(2);
    expect(sorted(later)).toEqual(await fullScan());
    expect(sorted(later)).toContainEqual({
      direction: 'credit',
      reason: 'token_pack_purchase',
      entries: 3,
      tokens: 240,
    });
  });

  it('counts an entry whose id was drawn before a read and committed after it (the fold waits for its transaction)', async () => {
    const reader = createLedgerTotalsReader();
    await readUntilSettled(reader);

    // A posting holds its transaction open with its id drawn (an id below the next one).
    const held = signal();
    const drawn = signal();
    const slow = inOutboxTransaction(database.db, testOutbox, async (trx) => {
      const posted = await postLedgerEntry(trx, {
        userId: 'totals-slow',
        reference: 'test:totals:slow',
        amount: 7,
        reason: 'token_pack_purchase',
      });
      drawn.resolve();
      await held.promise;
      return posted;
    });
    await drawn.promise;
    // Later ids commit first; the reads see them, not the slow one, and must not fold past it.
    await post('totals-fast', 5, 'token_pack_purchase');
    await reader.read(database.db);
    await post('totals-fast', 6, 'token_pack_purchase');
    await reader.read(database.db);
    await reader.read(database.db);
    expect(sorted(await reader.read(database.db))).toEqual(await fullScan());

    held.resolve();
    await slow;
    const totals = sorted(await readUntilSettled(reader));
    expect(totals).toEqual(await fullScan());
    const slowEntry = await database.db
      .selectFrom('ledger_entries')
      .select('id')
      .where('reference', '=', 'test:totals:slow')
      .executeTakeFirstOrThrow();
    expect(Number(slowEntry.id)).toBeLessThanOrEqual(reader.settledThrough);
  });
});
