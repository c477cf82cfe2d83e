import { BatchItemFailure } from '@tally/platform/db';
import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import type { Clock } from '../clock';
import {
  capturePricedHold,
  type PricedPlacement,
  placePricedHold,
  preparePricedPlacement,
} from '../features/priced-holds';
import { captureHold, releaseHold } from '../holds/end-hold';
import { type PlaceHoldResult, placeHold } from '../holds/place-hold';
import { readWalletFunds } from '../ledger/held-tokens';
import { verifyLedger } from '../ledger/verify-ledger';
import { noSpendLimits } from '../spend-limits/spend-limits';
import { fundWallet } from '../testing/fund-wallet';
import { withStudioRequestInFlight } from '../testing/studio-request-in-flight';
import { testCatalog } from '../testing/test-catalog';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { type HoldOperation, type HoldOperationResult, holdOperationsTogether } from './hold-operations-together';

const catalog = testCatalog({
  version: 'v1',
  features: [
    { id: 'video', unit: 'second', price: 2 },
    { id: 'chat', unit: 'token', per: 1000, variants: { small: { input: 1, output: 2 } } },
    { id: 'caption', price: 3, freeAllowance: { per: 'day', uses: 1 } },
  ],
});

type Estimate = { feature: string; variant?: string; quantity?: number; quantities?: Record<string, number> };
type Actual = { quantity?: number; quantities?: Record<string, number> };

/**
 * Holds by estimate in the hold batcher (holdOperationsTogether): placements and captures by
 * estimate arriving together with amount ones, each answered exactly as placePricedHold and
 * capturePricedHold answer it alone (twin users run the same operations alone: the same answers
 * and rows), those of distinct users sharing one transaction and one statement a step (read from
 * xmin and cmin). Real Postgres.
 */
describe('holdOperationsTogether: holds by estimate', () => {
  const database = useDatabase(createTestDatabase);
  const now = new Date('2031-05-01T10:00:00Z');
  const clock: Clock = { now: () => now };
  const unitDeps = () => ({ db: database.db, outbox: testOutbox, clock });
  const pricedDeps = () => ({ ...unitDeps(), catalog, spendLimits: noSpendLimits });
  const fund = (userId: string, tokens: number) => fundWallet(database.db, userId, tokens, `pt:fund:${userId}`);

  const priced = (userId: string, reference: string, spec: Estimate): PricedPlacement => {
    const prepared = preparePricedPlacement(catalog, {
      userId,
      reference,
      spec,
      reason: 'render',
      expiresInSeconds: 600,
      spendLimits: noSpendLimits,
    });
    if ('result' in prepared) throw new Error(`not priced: ${JSON.stringify(prepared.result)}`);
    return prepared;
  };
  const amountPlacement = (userId: string, reference: string, amount: number) => ({
    userId,
    reference,
    amount,
    reason: 'render',
    expiresInSeconds: 600,
    spendLimits: noSpendLimits,
  });
  const placeP = (userId: string, reference: string, spec: Estimate): HoldOperation => ({
    kind: 'place-priced',
    placement: priced(userId, reference, spec),
  });
  const captureP = (userId: string, holdId: string, actual: Actual): HoldOperation => ({
    kind: 'capture-priced',
    request: { userId, holdId, ...actual },
  });
  const placeA = (userId: string, reference: string, amount: number): HoldOperation => ({
    kind: 'place',
    placement: amountPlacement(userId, reference, amount),
  });
  const captureA = (userId: string, holdId: string, amount?: number): HoldOperation => ({
    kind: 'capture',
    request: { userId, holdId, amount },
  });

  /** An operation as it runs alone: placePricedHold, capturePricedHold, placeHold, captureHold, each in its own unit. */
  const alone = (operation: HoldOperation): Promise<HoldOperationResult> => {
    switch (operation.kind) {
      case 'place-priced': {
        const { usage, feature: _f, priceVersion: _v, spendLimits: _s, ...request } = operation.placement;
        const spec = { feature: usage.feature, variant: usage.variant ?? undefined, quantities: usage.quantities };
        return placePricedHold(pricedDeps(), { ...request, spec });
      }
      case 'capture-priced':
        return capturePricedHold(unitDeps(), operation.request);
      case 'place':
        return inUnitOfWork(unitDeps(), (uow) => placeHold(uow, operation.placement));
      case 'capture':
        return inUnitOfWork(unitDeps(), (uow) => captureHold(uow, operation.request));
    }
  };
  const held = async (userId: string, reference: string, spec: Estimate) => {
    const result = await alone(placeP(userId, reference, spec));
    if (result.kind !== 'placed') throw new Error(`not placed: ${JSON.stringify(result)}`);
    return result.hold.id;
  };
  const heldAmount = async (userId: string, reference: string, amount: number) => {
    const result = (await alone(placeA(userId, reference, amount))) as PlaceHoldResult;
    if (result.kind !== 'placed') throw new Error(`not placed: ${JSON.stringify(result)}`);
    return result.hold.id;
  };
  const together = async (operations: HoldOperation[]) =>
    (await holdOperationsTogether(unitDeps(), operations)).map((result) => {
      if (result instanceof BatchItemFailure) throw result.error;
      return result;
    });

  /** An answer without what differs between twins (hold ids, the users' prefix, times). */
  function normalized(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(normalized);
    if (value === null || typeof value !== 'object') {
      return typeof value === 'string' ? value.replace(/hold_[0-9a-f]{24}/g, 'hold_*').replace(/^p[bs]-/, 'p-') : value;
    }
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !['createdAt', 'expiresAt', 'settledAt'].includes(key))
        .map(([key, inner]) => [key, normalized(inner)]),
    );
  }

  /** A user's rows as a twin must have them too (holds, their uses, ledger entries, shortfalls). */
  async function rowsOf(userId: string) {
    const holds = await sql`
      SELECT h.reference, h.amount::int, h.status, h.captured::int, h.released::int, h.excess::int, h.debt::int,
             h.answer_balance::int, h.answer_available::int, h.priced,
             u.feature, u.variant, u.quantities, u.prices, u.per, u.price_version, u.cost::int, u.free_tier,
             u.allowance_group, u.given_back, u.answer_balance::int AS use_balance, u.answer_available::int AS use_available
        FROM holds h LEFT JOIN feature_uses u ON u.source = 'hold' AND u.reference = h.id
       WHERE h.user_id = ${userId} ORDER BY h.reference`.execute(database.db);
    const entries = await sql`
      SELECT regexp_replace(e.reference, 'hold_[0-9a-f]{24}', 'hold_*') AS reference, e.amount::int, e.balance_after::int
        FROM ledger_entries e WHERE e.user_id = ${userId} AND e.reference NOT LIKE 'pt:fund:%' ORDER BY e.id`.execute(
      database.db,
    );
    const shortfalls = await sql`
      SELECT source, shortfall::int FROM take_back_shortfalls WHERE user_id = ${userId} ORDER BY id`.execute(
      database.db,
    );
    return { holds: holds.rows, entries: entries.rows, shortfalls: shortfalls.rows };
  }

  /** The twin scenario: its users funded and holds placed alone, then the operations to run (per user prefix). */
  async function scenario(p: string): Promise<{ users: string[]; operations: HoldOperation[] }> {
    const u = (name: string) => `${p}-${name}`;
    const users = ['new', 'retry', 'other', 'amount', 'short', 'below', 'above', 'debt', 'done', 'gone', 'kinds'];
    users.push('unknown', 'free', 'more');
    for (const name of users) await fund(u(name), name === 'short' ? 10 : name === 'debt' ? 25 : 100);
    await held(u('retry'), 'r', { feature: 'video', quantity: 5 });
    await held(u('other'), 'r', { feature: 'video', quantity: 5 });
    await heldAmount(u('amount'), 'r', 10);
    const below = await held(u('below'), 'r', { feature: 'video', quantity: 10 });
    const above = await held(u('above'), 'r', { feature: 'video', quantity: 5 });
    const debt = await held(u('debt'), 'r', { feature: 'video', quantity: 5 });
    await heldAmount(u('debt'), 'r2', 12); // 25: 10 + 12 held, 3 available
    const done = await held(u('done'), 'r', { feature: 'video', quantity: 5 });
    await alone(captureP(u('done'), done, { quantity: 4 }));
    const gone = await held(u('gone'), 'r', { feature: 'video', quantity: 5 });
    await inUnitOfWork(unitDeps(), (uow) => releaseHold(uow, { userId: u('gone'), holdId: gone }));
    const amountHold = await heldAmount(u('kinds'), 'r', 10);
    const pricedHold = await held(u('kinds'), 'r2', { feature: 'video', quantity: 5 });
    const chat = await held(u('unknown'), 'r', { feature: 'chat', variant: 'small', quantities: { input: 1000 } });
    const more = await held(u('more'), 'r', { feature: 'video', quantity: 5 });
    return {
      users: users.map(u),
      operations: [
        placeP(u('new'), 'n', { feature: 'video', quantity: 10 }), // placed: 20 reserved
        placeP(u('retry'), 'r', { feature: 'video', quantity: 5 }), // the same estimate: that hold
        placeP(u('other'), 'r', { feature: 'video', quantity: 6 }), // another estimate: a conflict
        placeP(u('amount'), 'r', { feature: 'video', quantity: 5 }), // an amount hold's reference: a conflict
        placeP(u('short'), 'n', { feature: 'video', quantity: 10 }), // 20 of 10: insufficient
        captureP(u('below'), below, { quantity: 6 }), // 12 of 20: the rest released
        captureP(u('above'), above, { quantity: 9 }), // 18 of 10: 8 excess
        captureP(u('debt'), debt, { quantity: 10 }), // 20 of 10: 3 excess, 7 debt
        captureP(u('done'), done, { quantity: 4 }), // captured before: its first answer
        captureP(u('gone'), gone, { quantity: 1 }), // released: not active
        captureP(u('kinds'), amountHold, { quantity: 1 }), // an amount hold: not priced
        captureA(u('kinds'), pricedHold, 3), // a hold by estimate captured by amount: refused
        captureP(u('unknown'), chat, { quantities: { input: 5, images: 1 } }), // no such meter
        captureP(u('unknown'), chat, { quantity: 5, quantities: { input: 5 } }), // both: invalid
        placeP(u('free'), 'f1', { feature: 'caption' }), // the free slot: 0 reserved
        placeP(u('free'), 'f2', { feature: 'caption' }), // the slot taken: 3 reserved
        captureP(u('more'), more, { quantity: 2 }), // the user's first operation in the unit,
        placeP(u('more'), 'n', { feature: 'video', quantity: 40 }), // then placed on what it left (96 - 80 = 16)
        placeA(u('more'), 'a', 17), // 16 left: insufficient
        captureP(u('new'), 'hold_000000000000000000000000', { quantity: 1 }), // no such hold
      ],
    };
  }

  it('answers every placement and capture by estimate in a batch as it is answered alone, with the same rows', async () => {
    const batched = await scenario('pb');
    const results = await together(batched.operations);
    const single = await scenario('ps');
    const alones: HoldOperationResult[] = [];
    for (const operation of single.operations) alones.push(await alone(operation));

    expect(results.map((result) => result.kind)).toEqual([
      'placed',
      'existing',
      'conflict',
      'conflict',
      'insufficient',
      'ended',
      'ended',
      'ended',
      'already',
      'not-active',
      'not-priced',
      'priced',
      'unknown-feature',
      'invalid',
      'placed',
      'placed',
      'ended',
      'placed',
      'insufficient',
      'not-found',
    ]);
    expect(results[7]).toMatchObject({
      answer: { cost: 20, captured: 10, excess: 3, debt: 7, balance: 12, available: 0 },
    });
    expect(results[15]).toMatchObject({ hold: { amount: 3 } });
    expect(normalized(results)).toEqual(normalized(alones));
    for (const [index, user] of batched.users.entries()) {
      expect({ user, rows: await rowsOf(user) }).toEqual({
        user,
        rows: await rowsOf(single.users[index] as string),
      });
    }
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it('places and captures by estimate and by amount of distinct users in one transaction, one statement a step', async () => {
    const users = ['pw-a', 'pw-b', 'pw-c', 'pw-d'];
    for (const user of users) await fund(user, 100);
    const places = await together([
      placeP('pw-a', 'r', { feature: 'video', quantity: 10 }),
      placeA('pw-b', 'r', 15),
      placeP('pw-c', 'r', { feature: 'chat', variant: 'small', quantities: { input: 3000, output: 1000 } }),
      placeP('pw-d', 'r', { feature: 'video', quantity: 1 }),
    ]);
    expect(places.map((result) => result.kind)).toEqual(['placed', 'placed', 'placed', 'placed']);
    const ids = places.map((result) => (result as Extract<PlaceHoldResult, { kind: 'placed' }>).hold.id);
    // The holds and the uses of those by estimate: one transaction, one statement.
    const { rows: written } = await sql<{ transactions: number; statements: number; uses: number }>`
      SELECT count(DISTINCT x.xmin)::int AS transactions, count(DISTINCT (x.xmin, x.cmin))::int AS statements,
             count(*) FILTER (WHERE x.kind = 'use')::int AS uses
        FROM (SELECT xmin::text, cmin::text, 'hold' AS kind FROM holds WHERE id = ANY(${ids}::text[])
              UNION ALL
              SELECT xmin::text, cmin::text, 'use' FROM feature_uses WHERE source = 'hold' AND reference = ANY(${ids}::text[])) x`.execute(
      database.db,
    );
    expect(written[0]).toEqual({ transactions: 1, statements: 1, uses: 3 });

    const captures = await together([
      captureP('pw-a', ids[0] as string, { quantity: 7 }),
      captureA('pw-b', ids[1] as string, 5),
      captureP('pw-c', ids[2] as string, { quantities: { input: 1000, output: 1000 } }),
      captureP('pw-d', ids[3] as string, { quantity: 0 }), // nothing captured: no entry, the hold released whole
    ]);
    expect(captures.map((result) => result.kind)).toEqual(['ended', 'ended', 'ended', 'ended']);
    expect(captures[0]).toMatchObject({ answer: { captured: 14, released: 6, cost: 14, quantities: { second: 7 } } });
    expect(captures[2]).toMatchObject({ answer: { captured: 3, released: 2, cost: 3 } });
    expect(captures[3]).toMatchObject({ answer: { captured: 0, released: 2, cost: 0, balance: 100 } });
    // The holds ended and the actual uses written in one statement; the entries in one posting statement.
    const { rows: ended } = await sql<{ transactions: number; statements: number }>`
      SELECT count(DISTINCT x.xmin)::int AS transactions, count(DISTINCT (x.xmin, x.cmin))::int AS statements
        FROM (SELECT xmin::text, cmin::text FROM holds WHERE id = ANY(${ids}::text[])
              UNION ALL
              SELECT xmin::text, cmin::text FROM feature_uses WHERE source = 'hold' AND reference = ANY(${ids}::text[])) x`.execute(
      database.db,
    );
    expect(ended[0]).toEqual({ transactions: 1, statements: 1 });
    const { rows: uses } = await sql<{ reference: string; quantities: unknown; cost: number }>`
      SELECT reference, quantities, cost::int FROM feature_uses WHERE source = 'hold' AND reference = ANY(${ids}::text[])
       ORDER BY user_id`.execute(database.db);
    expect(uses.map((use) => [use.quantities, use.cost])).toEqual([
      [{ second: 7 }, 14],
      [{ input: 1000, output: 1000 }, 3],
      [{ second: 0 }, 0],
    ]);
    const { rows: entries } = await sql<{ statements: number; n: number }>`
      SELECT count(DISTINCT (xmin::text, cmin::text))::int AS statements, count(*)::int AS n
        FROM ledger_entries WHERE reference = ANY(${ids.map((id) => `hold:${id}:capture`)}::text[])`.execute(
      database.db,
    );
    expect(entries[0]).toEqual({ statements: 1, n: 3 });
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it('places a use that may take a free slot alone, after a studio request that holds the slot commits', async () => {
    await fund('pf-x', 50);
    await fund('pf-y', 50);
    const free = priced('pf-x', 'f', { feature: 'caption' });
    const group = free.feature.freeAllowance?.group as string;
    // A studio request of pf-x in flight: the studio lock, its free use counted and written, then its wallet.
    const { result: results, otherDoneFirst } = await withStudioRequestInFlight(
      database.db,
      { userId: 'pf-x', group, day: '2031-05-01', priceVersion: 'v1' },
      () =>
        together([{ kind: 'place-priced', placement: free }, placeP('pf-y', 'v', { feature: 'video', quantity: 2 })]),
      async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM holds WHERE user_id = 'pf-y'`.execute(database.db);
        return rows[0]?.n === 1;
      },
    );
    // The other user's placement did not wait for the studio request (it is not in pf-x's unit).
    expect(otherDoneFirst).toBe(true);
    expect(results.map((result) => result.kind)).toEqual(['placed', 'placed']);
    // The slot was the studio request's: the hold pays.
    expect(results[0]).toMatchObject({ hold: { amount: 3 } });
    const { rows } = await sql<{ free_tier: boolean; cost: number }>`
      SELECT u.free_tier, u.cost::int FROM feature_uses u JOIN holds h ON h.id = u.reference
       WHERE u.source = 'hold' AND h.user_id = 'pf-x'`.execute(database.db);
    expect(rows).toEqual([{ free_tier: false, cost: 3 }]);
    expect(await readWalletFunds(database.db, 'pf-x', { lock: false })).toEqual({
      balance: 50,
      held: 3,
      available: 47,
    });
  });

  it('runs a batch alone when its shared transaction fails: only the failing operation by estimate fails', async () => {
    for (const user of ['px-a', 'px-b', 'px-c']) await fund(user, 50);
    const hold = await held('px-c', 'r', { feature: 'video', quantity: 5 });
    // px-b's reference breaks the holds' length check: the batch's one insert fails, then alone only it does.
    const results = await holdOperationsTogether(unitDeps(), [
      placeP('px-a', 'r', { feature: 'video', quantity: 3 }),
      placeP('px-b', 'x'.repeat(201), { feature: 'video', quantity: 3 }),
      captureP('px-c', hold, { quantity: 2 }),
    ]);
    expect(results.map((result) => (result instanceof BatchItemFailure ? 'failed' : result.kind))).toEqual([
      'placed',
      'failed',
      'ended',
    ]);
    expect(String((results[1] as BatchItemFailure).error)).toMatch(/holds_reference_ck/);
    expect(await readWalletFunds(database.db, 'px-a', { lock: false })).toEqual({
      balance: 50,
      held: 6,
      available: 44,
    });
    expect(await readWalletFunds(database.db, 'px-b', { lock: false })).toEqual({
      balance: 50,
      held: 0,
      available: 50,
    });
    expect(await readWalletFunds(database.db, 'px-c', { lock: false })).toEqual({
      balance: 46,
      held: 0,
      available: 46,
    });
  });
});
