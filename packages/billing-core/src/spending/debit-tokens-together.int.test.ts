import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import { type LedgerPosting, postLedgerEntry } from '../ledger/post-ledger-entry';
import { verifyLedger } from '../ledger/verify-ledger';
import { answeredEach } from '../testing/answered-each';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { type DebitRequest, type DebitResult, debitTokens, debitTokensTogether } from './debit-tokens';

/**
 * debitTokensTogether (the api's debit batcher): debits arriving together answered exactly as
 * debitTokens answers each alone, debits of distinct users and references sharing one
 * transaction. Which transaction and statement wrote a row is read from its xmin and cmin.
 */
describe('debitTokensTogether', () => {
  const database = useDatabase(createTestDatabase);
  const deps = () => ({ db: database.db, outbox: testOutbox, spendLimits: { daily: null, monthly: null } });
  const debitTogether = async (...args: Parameters<typeof debitTokensTogether>) =>
    answeredEach(await debitTokensTogether(...args));

  const credit = (userId: string, amount: number, expiresAt: Date | null = null): LedgerPosting => ({
    userId,
    reference: `together:credit:${userId}:${amount}:${expiresAt?.getTime() ?? 'never'}`,
    amount,
    reason: 'test',
    lots: { kind: 'credit', category: 'purchased', expiresAt },
  });
  const fund = (posting: LedgerPosting) =>
    inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) => postLedgerEntry(uow, posting));
  const debit = (userId: string, reference: string, amount: number): DebitRequest => ({
    userId,
    reference: `debit:${reference}`,
    amount,
    reason: 'debit',
  });

  /** The transactions (xmin) and statements (xmin, cmin) that inserted rows of a table. */
  async function writersOf(table: 'ledger_entries' | 'ledger_draws', where: ReturnType<typeof sql>) {
    const { rows } = await sql<{ transactions: number; statements: number }>`
      SELECT count(DISTINCT xmin::text)::int AS transactions, count(DISTINCT (xmin::text, cmin::text))::int AS statements
        FROM ${sql.table(table)} WHERE ${where}`.execute(database.db);
    return rows[0];
  }

  it('debits distinct users in one transaction, one posting statement and one draws insert, answering each as alone', async () => {
    const users = ['tg-a', 'tg-b', 'tg-c', 'tg-d'];
    for (const user of users) {
      await fund(credit(user, 30));
      await fund(credit(user, 20, new Date(Date.now() + 86_400_000)));
    }
    const requests = users.map((user, index) => debit(user, `tg-first-${user}`, 25 + index));
    const results = await debitTogether(deps(), requests);

    expect(results.map((result) => result.kind)).toEqual(['debited', 'debited', 'debited', 'debited']);
    // The same answer a retry alone gives (debitTokens: the fence reads the entry back).
    for (const [index, request] of requests.entries()) {
      const alone = await debitTokens(deps(), request);
      expect(alone.kind).toBe('already-debited');
      const answer = (results[index] as Extract<DebitResult, { kind: 'debited' }>).answer;
      expect(answer).toEqual({
        ...(alone as Extract<DebitResult, { kind: 'already-debited' }>).answer,
        available: answer.available,
      });
      expect(answer.balance).toBe(50 - request.amount);
      // The expiring lot first (the draw order), then the lasting one.
      expect(answer.draws.reduce((sum, draw) => sum + draw.amount, 0)).toBe(request.amount);
      expect(answer.draws).toHaveLength(2);
    }
    const references = requests.map((request) => request.reference);
    expect(await writersOf('ledger_entries', sql`reference = ANY(${references}::text[])`)).toEqual({
      transactions: 1,
      statements: 1,
    });
    expect(
      await writersOf(
        'ledger_draws',
        sql`ledger_entry_id IN (SELECT id FROM ledger_entries WHERE reference = ANY(${references}::text[]))`,
      ),
    ).toEqual({ transactions: 1, statements: 1 });
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it('answers every kind of debit in a batch as alone: retries, conflicts, shortfalls, limits, a user twice', async () => {
    for (const user of ['tm-a', 'tm-b', 'tm-c', 'tm-d', 'tm-e']) await fund(credit(user, 40));
    await sql`INSERT INTO spend_limits (user_id, daily, monthly) VALUES ('tm-d', 10, NULL), ('tm-a', 16, NULL)`.execute(
      database.db,
    );
    expect((await debitTokens(deps(), debit('tm-a', 'tm-done', 5))).kind).toBe('debited');

    const results = await debitTogether(deps(), [
      debit('tm-a', 'tm-done', 5), // a retry: its first answer
      debit('tm-b', 'tm-done', 6), // another user under a taken reference: a conflict
      debit('tm-c', 'tm-short', 41), // more than the wallet has
      debit('tm-d', 'tm-limit', 11), // past the user's daily limit
      debit('tm-e', 'tm-e1', 30),
      debit('tm-e', 'tm-e2', 30), // the same wallet: after the first, short
      debit('tm-f', 'tm-nowallet', 1), // no wallet at all
      debit('tm-b', 'tm-b1', 40),
      debit('tm-a', 'tm-a1', 6),
      debit('tm-a', 'tm-a2', 6), // the same wallet, past its daily limit once the first is spent
    ]);

    expect(results.map((result) => result.kind)).toEqual([
      'already-debited',
      'conflict',
      'insufficient',
      'spend-limit',
      'debited',
      'insufficient',
      'insufficient',
      'debited',
      'debited',
      'spend-limit',
    ]);
    expect(results[2]).toEqual({ kind: 'insufficient', available: 40, requested: 41 });
    expect(results[5]).toEqual({ kind: 'insufficient', available: 10, requested: 30 });
    const balances = await sql<{ user_id: string; balance: number }>`
      SELECT user_id, balance FROM wallets WHERE user_id LIKE 'tm-%' ORDER BY user_id`.execute(database.db);
    expect(balances.rows.map((row) => [row.user_id, Number(row.balance)])).toEqual([
      ['tm-a', 29],
      ['tm-b', 0],
      ['tm-c', 40],
      ['tm-d', 40],
      ['tm-e', 10],
    ]);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it("decides a user's second debit of a batch on what the first left: it cannot pass a spend limit", async () => {
    for (const user of ['td-a', 'td-b']) await fund(credit(user, 100));
    await sql`INSERT INTO spend_limits (user_id, daily, monthly) VALUES ('td-a', 10, NULL)`.execute(database.db);
    const results = await debitTogether(deps(), [
      debit('td-a', 'td-a1', 6),
      debit('td-b', 'td-b1', 6),
      debit('td-a', 'td-a2', 6),
    ]);
    expect(results.map((result) => result.kind)).toEqual(['debited', 'debited', 'spend-limit']);
  });

  it("runs a user's further debits of a batch in the same transaction, in order, each on what the one before left, locking each wallet once", async () => {
    // The statements that lock wallets (Kysely's raw SQL, as lockWalletsInOrder and lockWalletFunds send it).
    const locks: string[] = [];
    const counting = database.db.withPlugin({
      transformQuery: ({ node }) => {
        const text = node.kind === 'RawNode' ? node.sqlFragments.join('?') : '';
        if (/FROM wallets[\s\S]*FOR UPDATE/.test(text)) locks.push(text);
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    await fund(credit('th-a', 10));
    await fund(credit('th-b', 10));
    const requests = [
      debit('th-a', 'th-a1', 4),
      debit('th-a', 'th-a2', 4),
      debit('th-b', 'th-b1', 3),
      debit('th-a', 'th-a3', 4),
      debit('th-a', 'th-a4', 2),
    ];
    const results = await debitTogether({ ...deps(), db: counting }, requests);
    expect(results.map((result) => result.kind)).toEqual(['debited', 'debited', 'debited', 'insufficient', 'debited']);
    // th-a's and th-b's first debits lock both wallets in one statement; th-a's further ones read under that lock.
    expect(locks).toHaveLength(1);
    expect(results[3]).toEqual({ kind: 'insufficient', available: 2, requested: 4 });
    expect((results[4] as Extract<DebitResult, { kind: 'debited' }>).answer.balance).toBe(0);
    // One transaction: its entries share its start time (now()); a savepoint's rows have an xmin of their own.
    const written = requests.filter((_, index) => index !== 3).map((request) => request.reference);
    const times = await sql<{ n: number }>`
      SELECT count(DISTINCT created_at)::int AS n FROM ledger_entries WHERE reference = ANY(${written}::text[])`.execute(
      database.db,
    );
    expect(times.rows[0]?.n).toBe(1);
  });

  it('locks the wallets before reading their funds: two batches debiting one user pass no limit', async () => {
    for (const user of ['lk-x', 'lk-a', 'lk-b']) await fund(credit(user, 100));
    await sql`INSERT INTO spend_limits (user_id, daily, monthly) VALUES ('lk-x', 10, NULL)`.execute(database.db);
    // Another transaction holds lk-x's wallet while both batches start: each must wait for it
    // before it reads what lk-x spent, so the second reads the first's debit.
    const blocker = await database.db.connection().execute(async (connection) => {
      await sql`BEGIN`.execute(connection);
      await sql`SELECT 1 FROM wallets WHERE user_id = 'lk-x' FOR UPDATE`.execute(connection);
      const batches = Promise.all([
        debitTogether(deps(), [debit('lk-x', 'lk-x1', 6), debit('lk-a', 'lk-a1', 1)]),
        debitTogether(deps(), [debit('lk-x', 'lk-x2', 6), debit('lk-b', 'lk-b1', 1)]),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await sql`COMMIT`.execute(connection);
      return batches;
    });
    const kinds = blocker.flatMap((results) => results.map((result) => result.kind));
    expect(kinds.filter((kind) => kind === 'debited')).toHaveLength(3);
    expect(kinds.filter((kind) => kind === 'spend-limit')).toHaveLength(1);
    const spent = await sql<{ spent: number }>`
      SELECT coalesce(sum(-amount), 0)::int AS spent FROM ledger_entries WHERE user_id = 'lk-x' AND amount < 0`.execute(
      database.db,
    );
    expect(spent.rows[0]?.spent).toBe(6);
  });

  it('runs a batch alone when its shared transaction fails, debiting each once', async () => {
    // tx-b's wallet counts an expired lot the sweeper has not taken yet: `available` covers the
    // debit, the lots do not (a spend never draws an expired lot), so the batch's draw throws.
    await fund(credit('tx-a', 20));
    await fund(credit('tx-b', 5));
    await fund(credit('tx-b', 50, new Date(Date.now() - 60_000)));
    await fund(credit('tx-c', 20));

    const results = await debitTogether(deps(), [
      debit('tx-a', 'tx-a1', 7),
      debit('tx-b', 'tx-b1', 30),
      debit('tx-c', 'tx-c1', 8),
    ]);

    expect(results.map((result) => result.kind)).toEqual(['debited', 'insufficient', 'debited']);
    expect(results[1]).toMatchObject({ kind: 'insufficient', requested: 30 });
    const entries = await sql<{ reference: string; amount: number }>`
      SELECT reference, amount FROM ledger_entries WHERE reference LIKE 'debit:tx-%' ORDER BY reference`.execute(
      database.db,
    );
    expect(entries.rows.map((row) => [row.reference, Number(row.amount)])).toEqual([
      ['debit:tx-a1', -7],
      ['debit:tx-c1', -8],
    ]);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });
});
