import { useDatabase } from '@tally/platform/testing';
import type { Clock } from '../clock';
import { readWalletFunds } from '../ledger/held-tokens';
import { verifyLedger } from '../ledger/verify-ledger';
import { noSpendLimits } from '../spend-limits/spend-limits';
import { fundWallet } from '../testing/fund-wallet';
import { testCatalog } from '../testing/test-catalog';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { recordUsage } from './record-usage';

const catalog = testCatalog({
  version: 'prices-1',
  features: [
    { id: 'video', unit: 'second', price: 2 },
    { id: 'chat', unit: 'token', per: 1000, variants: { small: { input: 1, output: 2 } } },
    { id: 'caption', price: 4, freeAllowance: { per: 'day', uses: 2, group: 'words' } },
    { id: 'summary', price: 6, freeAllowance: { per: 'day', uses: 2, group: 'words' } },
  ],
});

/**
 * Priced usage against real Postgres (docs/features.md): the catalog prices the use, the free
 * allowance of a group is shared and resets at the UTC day, the reference is the fence.
 */
describe('recordUsage: the catalog prices what the app spends', () => {
  const database = useDatabase(createTestDatabase);
  let now = new Date('2031-03-07T12:00:00Z');
  const clock: Clock = { now: () => now };

  const deps = () => ({ db: database.db, outbox: testOutbox, clock, catalog, spendLimits: noSpendLimits });
  const fund = (userId: string, tokens: number) =>
    fundWallet(database.db, userId, tokens, `test:fund:${userId}:${tokens}:${Math.random()}`);
  const use = (userId: string, reference: string, spec: Parameters<typeof recordUsage>[1]['spec']) =>
    recordUsage(deps(), { userId, reference, spec });

  it('debits each price shape under usage:{reference}, with the quantities, prices and the catalog version', async () => {
    await fund('usage-shapes', 100);
    expect(await use('usage-shapes', 'v1', { feature: 'video', quantity: 7 })).toMatchObject({
      kind: 'recorded',
      answer: {
        ledgerReference: 'usage:v1',
        feature: 'video',
        variant: null,
        quantities: { second: 7 },
        cost: 14,
        freeTier: false,
        priceVersion: 'prices-1',
        balance: 86,
        available: 86,
      },
    });
    expect(
      await use('usage-shapes', 'c1', { feature: 'chat', variant: 'small', quantities: { input: 1200, output: 300 } }),
    ).toMatchObject({
      answer: { cost: 2, balance: 84 },
    });
    // Zero quantities cost nothing and post no entry.
    expect(await use('usage-shapes', 'z1', { feature: 'video', quantity: 0 })).toMatchObject({
      answer: { cost: 0, balance: 84, draws: [] },
    });
    const entries = await database.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'reason'])
      .where('user_id', '=', 'usage-shapes')
      .where('reason', '=', 'usage')
      .orderBy('id')
      .execute();
    expect(entries).toEqual([
      { reference: 'usage:v1', amount: -14, reason: 'usage' },
      { reference: 'usage:c1', amount: -2, reason: 'usage' },
    ]);
    // Each usage's wallet.debited carries the feature, its variant, the quantities and the cost.
    const debited = await database.db
      .selectFrom('app_webhook_messages')
      .select('data')
      .where('user_id', '=', 'usage-shapes')
      .where('type', '=', 'wallet.debited')
      .orderBy('id')
      .execute();
    expect(debited.map((m) => m.data)).toEqual([
      expect.objectContaining({
        reference: 'usage:v1',
        amount: -14,
        feature: 'video',
        variant: null,
        quantities: { second: 7 },
        cost: 14,
      }),
      expect.objectContaining({
        reference: 'usage:c1',
        feature: 'chat',
        variant: 'small',
        quantities: { input: 1200, output: 300 },
        cost: 2,
      }),
    ]);
    const rows = await database.db
      .selectFrom('feature_uses')
      .select(['reference', 'quantities', 'prices', 'per', 'price_version', 'cost'])
      .where('user_id', '=', 'usage-shapes')
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      {
        reference: 'v1',
        quantities: { second: 7 },
        prices: { second: 2 },
        per: 1,
        price_version: 'prices-1',
        cost: 14,
      },
      {
        reference: 'c1',
        quantities: { input: 1200, output: 300 },
        prices: { input: 1, output: 2 },
        per: 1000,
        price_version: 'prices-1',
        cost: 2,
      },
      { reference: 'z1', quantities: { second: 0 }, prices: { second: 2 }, per: 1, price_version: 'prices-1', cost: 0 },
    ]);
  });

  it('names the known features, variants and meters, and charges nothing', async () => {
    await fund('usage-unknown', 10);
    expect(await use('usage-unknown', 'u1', { feature: 'nope' })).toMatchObject({
      kind: 'unknown-feature',
      known: expect.arrayContaining(['chat', 'video']),
    });
    expect(await use('usage-unknown', 'u2', { feature: 'chat', variant: 'x', quantities: { input: 1 } })).toMatchObject(
      { kind: 'unknown-feature', known: ['small'] },
    );
    expect(
      await use('usage-unknown', 'u3', { feature: 'chat', variant: 'small', quantities: { cached: 1 } }),
    ).toMatchObject({ kind: 'unknown-feature', known: ['input', 'output'] });
    expect(await readWalletFunds(database.db, 'usage-unknown', { lock: false })).toMatchObject({ balance: 10 });
  });

  it('answers ten concurrent retries of one reference with the first answer, charging once; another body is a conflict', async () => {
    await fund('usage-retry', 50);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => use('usage-retry', 'r1', { feature: 'video', quantity: 5 })),
    );
    expect(answers.filter((a) => a.kind === 'recorded')).toHaveLength(1);
    expect(answers.filter((a) => a.kind === 'already-recorded')).toHaveLength(9);
    const first = answers.find((a) => a.kind === 'recorded');
    for (const answer of answers)
      expect('answer' in answer && answer.answer).toEqual(first && 'answer' in first && first.answer);
    expect(await readWalletFunds(database.db, 'usage-retry', { lock: false })).toMatchObject({ balance: 40 });
    expect(await use('usage-retry', 'r1', { feature: 'video', quantity: 6 })).toMatchObject({ kind: 'conflict' });
    expect(await use('usage-other', 'r1', { feature: 'video', quantity: 5 })).toMatchObject({ kind: 'conflict' });
  });

  it('refuses a use it cannot pay for with its cost and what is available, charging and recording nothing', async () => {
    await fund('usage-short', 5);
    expect(await use('usage-short', 's1', { feature: 'video', quantity: 3 })).toEqual({
      kind: 'insufficient',
      cost: 6,
      available: 5,
    });
    expect(
      await database.db.selectFrom('feature_uses').select('id').where('user_id', '=', 'usage-short').execute(),
    ).toEqual([]);
  });

  it("shares a group's free allowance between its features and resets it at the UTC day", async () => {
    await fund('usage-free', 100);
    now = new Date('2031-03-07T23:59:00Z');
    const charged = async (reference: string, feature: string) => {
      const result = await use('usage-free', reference, { feature });
      if (result.kind !== 'recorded') throw new Error(result.kind);
      return [result.answer.freeTier, result.answer.cost];
    };
    expect(await charged('f1', 'caption')).toEqual([true, 0]);
    expect(await charged('f2', 'summary')).toEqual([true, 0]);
    expect(await charged('f3', 'caption')).toEqual([false, 4]);
    expect(await charged('f4', 'summary')).toEqual([false, 6]);
    now = new Date('2031-03-08T00:00:00Z');
    expect(await charged('f5', 'summary')).toEqual([true, 0]);
    expect(await readWalletFunds(database.db, 'usage-free', { lock: false })).toMatchObject({ balance: 90 });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it("answers a conflict, charging nothing, when another user's free use takes the reference after its fence's read", async () => {
    await fund('usage-twin-a', 50);
    // A transaction holding usage-twin-a's lot stops its usage after the fence's read (at the lots' read).
    const blocker = await database.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT id FROM credit_lots WHERE user_id = 'usage-twin-a' FOR UPDATE");
      const charged = use('usage-twin-a', 'twin-ref', { feature: 'video', quantity: 5 });
      await untilWaitingOnLock(database.pool);
      // Another user's free use (zero quantities: no debit) takes the reference meanwhile.
      expect(await use('usage-twin-b', 'twin-ref', { feature: 'video', quantity: 0 })).toMatchObject({
        kind: 'recorded',
        answer: { cost: 0 },
      });
      await blocker.query('COMMIT');
      expect(await charged).toEqual({
        kind: 'conflict',
        message: 'reference twin-ref already recorded another usage or user',
      });
    } finally {
      blocker.release();
    }
    expect(await readWalletFunds(database.db, 'usage-twin-a', { lock: false })).toMatchObject({ balance: 50 });
    expect(
      await database.db.selectFrom('feature_uses').select('user_id').where('reference', '=', 'twin-ref').execute(),
    ).toEqual([{ user_id: 'usage-twin-b' }]);
  });
});

/** Until a session of the database waits on a lock. */
async function untilWaitingOnLock(pool: { query(text: string): Promise<{ rows: { n: number }[] }> }) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no session waits on a lock');
}
