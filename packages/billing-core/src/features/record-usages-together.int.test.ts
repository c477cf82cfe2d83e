import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import type { Clock } from '../clock';
import { type LedgerPosting, postLedgerEntry } from '../ledger/post-ledger-entry';
import { verifyLedger } from '../ledger/verify-ledger';
import { noSpendLimits } from '../spend-limits/spend-limits';
import { answeredEach } from '../testing/answered-each';
import { withStudioRequestInFlight } from '../testing/studio-request-in-flight';
import { testCatalog } from '../testing/test-catalog';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { type RecordUsageResult, recordUsage, recordUsagesTogether, type UsageRequest } from './record-usage';

const catalog = testCatalog({
  version: 'prices-1',
  features: [
    { id: 'video', unit: 'second', price: 2 },
    { id: 'caption', price: 4, freeAllowance: { per: 'day', uses: 1, group: 'words' } },
  ],
});

/**
 * recordUsagesTogether (the api's usage batcher): usages arriving together answered exactly as
 * recordUsage answers each alone, the usages of distinct users (features without a free
 * allowance) sharing one transaction, one posting statement and one insert of their uses.
 */
describe('recordUsagesTogether', () => {
  const database = useDatabase(createTestDatabase);
  const clock: Clock = { now: () => new Date() };
  const deps = () => ({ db: database.db, outbox: testOutbox, clock, catalog, spendLimits: noSpendLimits });
  const usagesTogether = async (...args: Parameters<typeof recordUsagesTogether>) =>
    answeredEach(await recordUsagesTogether(...args));

  const fund = (userId: string, amount: number, expiresAt: Date | null = null) =>
    inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      postLedgerEntry(uow, {
        userId,
        reference: `usage-together:fund:${userId}:${amount}:${expiresAt?.getTime() ?? 'never'}`,
        amount,
        reason: 'test',
        lots: { kind: 'credit', category: 'purchased', expiresAt },
      } satisfies LedgerPosting),
    );
  const video = (userId: string, reference: string, seconds: number): UsageRequest => ({
    userId,
    reference,
    spec: { feature: 'video', quantity: seconds },
  });
  const kinds = (results: RecordUsageResult[]) => results.map((result) => result.kind);

  /** The transactions that wrote rows: their start times (now()), which savepoints share. */
  async function transactionsOf(table: 'ledger_entries' | 'feature_uses', column: string, values: string[]) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(DISTINCT created_at)::int AS n FROM ${sql.table(table)}
       WHERE ${sql.ref(column)} = ANY(${values}::text[])`.execute(database.db);
    return rows[0]?.n;
  }

  it('records distinct users in one transaction, one posting statement and one insert, answering each as alone', async () => {
    const users = ['ut-a', 'ut-b', 'ut-c'];
    for (const user of users) await fund(user, 50);
    const requests = users.map((user, index) => video(user, `ut-first-${user}`, 3 + index));
    const results = await usagesTogether(deps(), requests);

    expect(kinds(results)).toEqual(['recorded', 'recorded', 'recorded']);
    for (const [index, request] of requests.entries()) {
      const alone = await recordUsage(deps(), request);
      expect(alone.kind).toBe('already-recorded');
      expect((results[index] as Extract<RecordUsageResult, { kind: 'recorded' }>).answer).toEqual(
        (alone as Extract<RecordUsageResult, { kind: 'already-recorded' }>).answer,
      );
    }
    expect((results[2] as Extract<RecordUsageResult, { kind: 'recorded' }>).answer).toMatchObject({
      cost: 10,
      balance: 40,
      draws: [{ amount: 10 }],
    });
    const references = requests.map((request) => `usage:${request.reference}`);
    const statements = await sql<{ n: number }>`
      SELECT count(DISTINCT (xmin::text, cmin::text))::int AS n FROM ledger_entries
       WHERE reference = ANY(${references}::text[])`.execute(database.db);
    expect(statements.rows[0]?.n).toBe(1);
    expect(
      await transactionsOf(
        'feature_uses',
        'reference',
        requests.map((request) => request.reference),
      ),
    ).toBe(1);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it("answers every kind of usage in a batch as alone, a user's further usages in order in the same transaction", async () => {
    for (const user of ['um-a', 'um-b', 'um-c', 'um-d']) await fund(user, 40);
    await sql`INSERT INTO spend_limits (user_id, daily, monthly) VALUES ('um-d', 10, NULL)`.execute(database.db);
    expect((await recordUsage(deps(), video('um-a', 'um-done', 5))).kind).toBe('recorded');

    const results = await usagesTogether(deps(), [
      video('um-a', 'um-done', 5), // a retry: its first answer
      video('um-b', 'um-done', 5), // another user under a taken reference: a conflict
      video('um-c', 'um-short', 21), // 42 tokens: more than the wallet has
      { userId: 'um-c', reference: 'um-unknown', spec: { feature: 'nope', quantity: 1 } },
      video('um-d', 'um-d1', 3), // 6 of a daily limit of 10
      video('um-d', 'um-d2', 3), // 12: past it, decided on what the first spent
      { userId: 'um-b', reference: 'um-free', spec: { feature: 'caption', quantity: 1 } }, // free: alone
      video('um-b', 'um-b1', 20), // all of um-b's 40
      video('um-b', 'um-b2', 1), // nothing left
    ]);

    expect(kinds(results)).toEqual([
      'already-recorded',
      'conflict',
      'insufficient',
      'unknown-feature',
      'recorded',
      'spend-limit',
      'recorded',
      'recorded',
      'insufficient',
    ]);
    expect(results[6]).toMatchObject({ answer: { freeTier: true, cost: 0 } });
    expect(results[8]).toEqual({ kind: 'insufficient', cost: 2, available: 0 });
    const written = ['usage:um-d1', 'usage:um-b1'];
    expect(await transactionsOf('ledger_entries', 'reference', written)).toBe(1);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it("decides a user's second usage of a batch on what the first left: it cannot pass a spend limit", async () => {
    for (const user of ['ud-a', 'ud-b']) await fund(user, 100);
    await sql`INSERT INTO spend_limits (user_id, daily, monthly) VALUES ('ud-a', 10, NULL)`.execute(database.db);
    const results = await usagesTogether(deps(), [
      video('ud-a', 'ud-a1', 3),
      video('ud-b', 'ud-b1', 3),
      video('ud-a', 'ud-a2', 3),
    ]);
    expect(kinds(results)).toEqual(['recorded', 'recorded', 'spend-limit']);
  });

  it('runs a batch alone when its shared transaction fails, charging each once', async () => {
    // uf-b's wallet counts an expired lot the sweeper has not taken: `available` covers the
    // usage, the lots do not, so the batch's draw throws and each usage runs alone.
    await fund('uf-a', 20);
    await fund('uf-b', 4);
    await fund('uf-b', 50, new Date(Date.now() - 60_000));
    await fund('uf-c', 20);
    const results = await usagesTogether(deps(), [
      video('uf-a', 'uf-a1', 2),
      video('uf-b', 'uf-b1', 10),
      video('uf-c', 'uf-c1', 3),
    ]);
    expect(kinds(results)).toEqual(['recorded', 'insufficient', 'recorded']);
    const entries = await sql<{ reference: string; amount: number }>`
      SELECT reference, amount FROM ledger_entries WHERE reference LIKE 'usage:uf-%' ORDER BY reference`.execute(
      database.db,
    );
    expect(entries.rows.map((row) => [row.reference, Number(row.amount)])).toEqual([
      ['usage:uf-a1', -4],
      ['usage:uf-c1', -6],
    ]);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it('records a usage that may take a free slot alone, after a studio request that holds the slot commits', async () => {
    await fund('ux-x', 50);
    await fund('ux-y', 50);
    const today = new Date().toISOString().slice(0, 10);
    // A studio request of ux-x in flight: the studio lock, its free use of the group counted and written, then its wallet.
    const { result: results, otherDoneFirst } = await withStudioRequestInFlight(
      database.db,
      { userId: 'ux-x', group: 'words', day: today, priceVersion: 'prices-1' },
      () =>
        usagesTogether(deps(), [
          { userId: 'ux-x', reference: 'ux-caption', spec: { feature: 'caption' } },
          video('ux-y', 'ux-video', 3),
        ]),
      async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM feature_uses WHERE reference = 'ux-video'`.execute(database.db);
        return rows[0]?.n === 1;
      },
    );
    // The other user's usage did not wait for the studio request (it is not in ux-x's unit).
    expect(otherDoneFirst).toBe(true);
    expect(kinds(results)).toEqual(['recorded', 'recorded']);
    // The day's one free use was the studio request's: the usage pays.
    expect(results[0]).toMatchObject({ answer: { freeTier: false, cost: 4, balance: 46 } });
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });
});
