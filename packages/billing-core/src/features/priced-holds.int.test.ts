import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import type { Clock } from '../clock';
import { releaseHold } from '../holds/end-hold';
import { readWalletFunds } from '../ledger/held-tokens';
import { verifyLedger } from '../ledger/verify-ledger';
import { noSpendLimits } from '../spend-limits/spend-limits';
import { fundWallet } from '../testing/fund-wallet';
import { testCatalog } from '../testing/test-catalog';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { capturePricedHold, placePricedHold } from './priced-holds';
import { recordUsage } from './record-usage';

const catalogAt = (videoPrice: number, version: string) =>
  testCatalog({
    version,
    features: [
      { id: 'video', unit: 'second', price: videoPrice },
      { id: 'chat', unit: 'token', per: 1000, variants: { small: { input: 1, output: 2 } } },
      { id: 'caption', price: 3, freeAllowance: { per: 'day', uses: 1 } },
    ],
  });

/**
 * Holds by estimate (docs/features.md): a hold reserves the estimate's cost at the catalog's prices
 * then, and its capture charges the actual quantities at those prices: below the estimate frees
 * the rest, above it takes the excess from what is available, and what is still missing is
 * recorded (to be debt). Real Postgres, the billing-core use cases.
 */
describe('holds by estimate, captured at the actual cost', () => {
  const database = useDatabase(createTestDatabase);
  const now = new Date('2031-05-01T10:00:00Z');
  const clock: Clock = { now: () => now };

  const catalog = catalogAt(2, 'v1');
  const deps = (c = catalog) => ({
    db: database.db,
    outbox: testOutbox,
    clock,
    catalog: c,
    spendLimits: noSpendLimits,
  });
  const fund = (userId: string, tokens: number) => fundWallet(database.db, userId, tokens, `test:fund:${userId}`);
  type Estimate = Parameters<typeof placePricedHold>[1]['spec'];
  const place = (userId: string, reference: string, spec: Estimate, reason = 'render', c = catalog) =>
    placePricedHold(deps(c), { userId, reference, spec, reason, expiresInSeconds: 600 });
  const hold = async (userId: string, reference: string, spec: Estimate, c = catalog) => {
    const placed = await place(userId, reference, spec, 'render', c);
    if (placed.kind !== 'placed') throw new Error(`not placed: ${JSON.stringify(placed)}`);
    return placed;
  };
  const capture = (
    userId: string,
    holdId: string,
    actual: { quantity?: number; quantities?: Record<string, number> },
  ) => capturePricedHold({ db: database.db, outbox: testOutbox }, { userId, holdId, ...actual });
  const funds = (userId: string) => readWalletFunds(database.db, userId, { lock: false });

  it('reserves the estimate, and captures below, at and above it (the excess from what is available)', async () => {
    await fund('est-a', 100);
    const below = await hold('est-a', 'r-below', { feature: 'video', quantity: 10 });
    expect(below).toMatchObject({ hold: { amount: 20 }, available: 80 });
    expect(await capture('est-a', below.hold.id, { quantity: 6 })).toMatchObject({
      kind: 'ended',
      answer: {
        captured: 12,
        released: 8,
        cost: 12,
        quantities: { second: 6 },
        excess: 0,
        debt: 0,
        balance: 88,
        available: 88,
      },
    });
    const at = await hold('est-a', 'r-at', { feature: 'video', quantity: 5 });
    expect(await capture('est-a', at.hold.id, { quantity: 5 })).toMatchObject({
      answer: { captured: 10, released: 0, excess: 0, debt: 0, balance: 78 },
    });
    const above = await hold('est-a', 'r-above', { feature: 'video', quantity: 5 });
    expect(await capture('est-a', above.hold.id, { quantity: 9 })).toMatchObject({
      answer: { captured: 10, released: 0, cost: 18, excess: 8, debt: 0, balance: 60, available: 60 },
    });
    // A second capture answers the first, charging nothing.
    expect(await capture('est-a', above.hold.id, { quantity: 9 })).toMatchObject({
      kind: 'already',
      answer: { cost: 18, excess: 8 },
    });
    const entries = await database.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount'])
      .where('user_id', '=', 'est-a')
      .where('reference', 'like', 'hold:%')
      .orderBy('id')
      .execute();
    expect(entries.map((e) => e.amount)).toEqual([-12, -10, -10, -8]);
    expect(entries[3]?.reference).toBe(`hold:${above.hold.id}:excess`);
    const excessMessage = await database.db
      .selectFrom('app_webhook_messages')
      .select('data')
      .where('type', '=', 'wallet.debited')
      .where(sql<boolean>`data->>'reference' = ${`hold:${above.hold.id}:excess`}`)
      .executeTakeFirstOrThrow();
    expect(excessMessage.data).toMatchObject({
      amount: -8,
      feature: 'video',
      variant: null,
      quantities: { second: 9 },
      cost: 18,
    });
    expect(await funds('est-a')).toEqual({ balance: 60, held: 0, available: 60 });
  });

  it('records what a capture above everything available could not take, and never fails for its price', async () => {
    await fund('est-debt', 30);
    const placed = await hold('est-debt', 'r-1', {
      feature: 'chat',
      variant: 'small',
      quantities: { input: 10_000, output: 0 },
    });
    expect(placed.hold.amount).toBe(10);
    // Another spend leaves 5 available beside the hold.
    await recordUsage(deps(), { userId: 'est-debt', reference: 'debt-u-1', spec: { feature: 'video', quantity: 7 } });
    expect(await funds('est-debt')).toEqual({ balance: 16, held: 10, available: 6 });
    const captured = await capture('est-debt', placed.hold.id, { quantities: { input: 10_000, output: 10_000 } });
    // 30 actual: 10 captured, 6 of the 20 excess taken, 14 missing.
    expect(captured).toMatchObject({
      kind: 'ended',
      answer: { cost: 30, captured: 10, excess: 6, debt: 14, balance: 0, available: 0 },
    });
    const shortfalls = await database.db
      .selectFrom('take_back_shortfalls')
      .select(['source', 'source_id', 'shortfall', 'take_back_reference'])
      .where('user_id', '=', 'est-debt')
      .execute();
    expect(shortfalls).toEqual([
      {
        source: 'priced_capture',
        source_id: placed.hold.id,
        shortfall: 14,
        take_back_reference: `hold:${placed.hold.id}:excess`,
      },
    ]);
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it("charges the hold's prices when the catalog changed between the hold and its capture; every use names its version", async () => {
    await fund('est-version', 100);
    const placed = await hold('est-version', 'r-1', { feature: 'video', quantity: 10 });
    const dearer = catalogAt(5, 'v2');
    // A new usage pays the new price...
    expect(
      await recordUsage(deps(dearer), {
        userId: 'est-version',
        reference: 'version-u-v2',
        spec: { feature: 'video', quantity: 1 },
      }),
    ).toMatchObject({
      answer: { cost: 5, priceVersion: 'v2' },
    });
    // ...while the hold placed at v1 captures at 2 a second.
    expect(await capture('est-version', placed.hold.id, { quantity: 10 })).toMatchObject({
      answer: { cost: 20, captured: 20 },
    });
    const versions = await database.db
      .selectFrom('feature_uses')
      .select(['source', 'price_version', 'prices'])
      .where('user_id', '=', 'est-version')
      .orderBy('id')
      .execute();
    expect(versions).toEqual([
      { source: 'hold', price_version: 'v1', prices: { second: 2 } },
      { source: 'usage', price_version: 'v2', prices: { second: 5 } },
    ]);
  });

  it('reserves the use of a free slot (0 tokens), and a released or lapsed hold gives the use back', async () => {
    await fund('est-free', 10);
    const free = await hold('est-free', 'r-1', { feature: 'caption' });
    expect(free).toMatchObject({ hold: { amount: 0 }, available: 10 });
    // The slot is taken while the hold is open: the next caption pays.
    expect(
      await recordUsage(deps(), { userId: 'est-free', reference: 'free-u-1', spec: { feature: 'caption' } }),
    ).toMatchObject({
      answer: { freeTier: false, cost: 3 },
    });
    await inUnitOfWork({ db: database.db, outbox: testOutbox }, (uow) =>
      releaseHold(uow, { userId: 'est-free', holdId: free.hold.id }),
    );
    expect(
      await recordUsage(deps(), { userId: 'est-free', reference: 'free-u-2', spec: { feature: 'caption' } }),
    ).toMatchObject({
      answer: { freeTier: true, cost: 0 },
    });
    // Captured free: a free use costs nothing whatever its quantities.
    await fund('est-free-2', 10);
    const second = await hold('est-free-2', 'r-1', { feature: 'caption' });
    expect(await capture('est-free-2', second.hold.id, { quantity: 3 })).toMatchObject({
      answer: { cost: 0, captured: 0, excess: 0 },
    });
    // A lapsed free hold gives its use back too.
    await fund('est-free-3', 10);
    const lapsing = await hold('est-free-3', 'r-1', { feature: 'caption' });
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${lapsing.hold.id}`.execute(
      database.db,
    );
    expect(
      await recordUsage(deps(), { userId: 'est-free-3', reference: 'free3-u-1', spec: { feature: 'caption' } }),
    ).toMatchObject({
      answer: { freeTier: true },
    });
  });

  it('answers the same estimate under its reference with the first hold, another estimate with a conflict; an amount capture is refused', async () => {
    await fund('est-ref', 50);
    const first = await hold('est-ref', 'r-1', { feature: 'video', quantity: 3 });
    expect(await place('est-ref', 'r-1', { feature: 'video', quantity: 3 }, 'x')).toMatchObject({
      kind: 'existing',
      hold: { id: first.hold.id },
    });
    expect(await place('est-ref', 'r-1', { feature: 'video', quantity: 4 }, 'x')).toMatchObject({
      kind: 'conflict',
    });
    expect(await capture('est-ref', first.hold.id, { quantities: { frames: 1 } })).toMatchObject({
      kind: 'unknown-feature',
      known: ['second'],
    });
    // Captured (its use now holds the actual quantities), a retry of the placement still answers the hold.
    expect(await capture('est-ref', first.hold.id, { quantity: 5 })).toMatchObject({
      kind: 'ended',
      answer: { cost: 10 },
    });
    expect(await place('est-ref', 'r-1', { feature: 'video', quantity: 3 }, 'x')).toMatchObject({
      kind: 'existing',
      hold: { id: first.hold.id, status: 'captured' },
    });
  });
});
