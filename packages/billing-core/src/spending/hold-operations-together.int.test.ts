import { BatchItemFailure } from '@tally/platform/db';
import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import { type CaptureHoldResult, type CaptureRequest, captureHold, releaseHold } from '../holds/end-hold';
import { type HoldPlacement, newHoldId, type PlaceHoldResult, placeHold } from '../holds/place-hold';
import { readWalletFunds } from '../ledger/held-tokens';
import { type LedgerPosting, postLedgerEntry } from '../ledger/post-ledger-entry';
import { verifyLedger } from '../ledger/verify-ledger';
import { answeredEach } from '../testing/answered-each';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { type HoldOperation, holdOperationsTogether } from './hold-operations-together';

/**
 * holdOperationsTogether (the api's hold batcher): placements and captures arriving together
 * answered exactly as placeHold and captureHold answer each alone, those of distinct users sharing
 * one transaction and one statement per step. Which transaction and statement wrote a row is read
 * from its xmin and cmin.
 */
describe('holdOperationsTogether', () => {
  const database = useDatabase(createTestDatabase);
  const unitDeps = () => ({ db: database.db, outbox: testOutbox });
  const together = async (operations: HoldOperation[]) =>
    answeredEach(await holdOperationsTogether(unitDeps(), operations));

  const credit = (userId: string, amount: number, expiresAt: Date | null = null): LedgerPosting => ({
    userId,
    reference: `hold-together:credit:${userId}:${amount}:${expiresAt?.getTime() ?? 'never'}`,
    amount,
    reason: 'test',
    lots: { kind: 'credit', category: 'purchased', expiresAt },
  });
  const fund = (posting: LedgerPosting) => inUnitOfWork(unitDeps(), (uow) => postLedgerEntry(uow, posting));
  const placement = (userId: string, reference: string, amount: number): HoldPlacement => ({
    userId,
    reference,
    amount,
    reason: 'hold',
    expiresInSeconds: 900,
    spendLimits: { daily: null, monthly: null },
  });
  const place = (p: HoldPlacement): HoldOperation => ({ kind: 'place', placement: p });
  const capture = (userId: string, holdId: string, amount?: number): HoldOperation => ({
    kind: 'capture',
    request: { userId, holdId, amount },
  });
  const alonePlace = (p: HoldPlacement) => inUnitOfWork(unitDeps(), (uow) => placeHold(uow, p));
  const aloneCapture = (request: CaptureRequest) => inUnitOfWork(unitDeps(), (uow) => captureHold(uow, request));
  const placed = (result: unknown) => result as Extract<PlaceHoldResult, { kind: 'placed' | 'existing' }>;
  const ended = (result: unknown) => result as Extract<CaptureHoldResult, { kind: 'ended' | 'already' }>;

  /** The transactions (xmin) and statements (xmin, cmin) that wrote the rows `where` picks of a table. */
  async function writersOf(table: string, where: ReturnType<typeof sql>) {
    const { rows } = await sql<{ transactions: number; statements: number }>`
      SELECT count(DISTINCT xmin::text)::int AS transactions, count(DISTINCT (xmin::text, cmin::text))::int AS statements
        FROM ${sql.table(table)} WHERE ${where}`.execute(database.db);
    return rows[0];
  }

  it('names new holds in time order: the first 12 hex digits the milliseconds, then 12 random ones', () => {
    const id = newHoldId(0x0123456789ab);
    expect(id).toMatch(/^hold_0123456789ab[0-9a-f]{12}$/);
    expect(newHoldId(1_800_000_000_000) < newHoldId(1_800_000_000_001)).toBe(true);
    expect(newHoldId(5)).not.toBe(newHoldId(5));
  });

  it('places and captures holds of distinct users in one transaction, one statement a step, answering each as alone', async () => {
    const users = ['ht-a', 'ht-b', 'ht-c', 'ht-d'];
    for (const user of users) {
      await fund(credit(user, 30));
      await fund(credit(user, 20, new Date(Date.now() + 86_400_000)));
    }
    const placements = users.map((user, index) => placement(user, `ht-${user}`, 25 + index));
    const places = await together(placements.map(place));

    expect(places.map((result) => result.kind)).toEqual(['placed', 'placed', 'placed', 'placed']);
    const holdIds = places.map((result) => placed(result).hold.id);
    for (const [index, p] of placements.entries()) {
      // The same answer a retry alone gives (the fence finds the hold): the hold as it is, and available.
      const alone = await alonePlace(p);
      expect(alone).toEqual({ ...places[index], kind: 'existing' });
      expect(placed(alone).available).toBe(50 - p.amount);
    }
    expect(await writersOf('holds', sql`id = ANY(${holdIds}::text[])`)).toEqual({ transactions: 1, statements: 1 });
    expect(await writersOf('hold_lots', sql`hold_id = ANY(${holdIds}::text[])`)).toEqual({
      transactions: 1,
      statements: 1,
    });
    // Each reserves the expiring lot first (the draw order), then the lasting one.
    const { rows: reserved } = await sql<{ hold_id: string; lots: number }>`
      SELECT hold_id, count(*)::int AS lots FROM hold_lots WHERE hold_id = ANY(${holdIds}::text[]) GROUP BY hold_id`.execute(
      database.db,
    );
    expect(reserved.map((row) => row.lots)).toEqual([2, 2, 2, 2]);

    const captures = await together(users.map((user, index) => capture(user, holdIds[index] as string, 21)));
    expect(captures.map((result) => result.kind)).toEqual(['ended', 'ended', 'ended', 'ended']);
    for (const [index, user] of users.entries()) {
      const answer = ended(captures[index]).answer;
      expect(answer).toMatchObject({
        status: 'captured',
        captured: 21,
        released: 4 + index,
        balance: 29,
        available: 29,
      });
      // A retry alone answers the first capture's answer (stored on the hold), posting nothing.
      expect(await aloneCapture({ userId: user, holdId: holdIds[index] as string, amount: 21 })).toEqual({
        kind: 'already',
        answer,
      });
    }
    const references = holdIds.map((id) => `hold:${id}:capture`);
    const entries = sql`reference = ANY(${references}::text[])`;
    expect(await writersOf('ledger_entries', entries)).toEqual({ transactions: 1, statements: 1 });
    // The posting statement moved and recorded the captures' draws itself (known from the holds' lots).
    const { rows: sameStatement } = await sql<{ n: number }>`
      SELECT count(DISTINCT (d.xmin::text, d.cmin::text))::int AS n FROM ledger_draws d
        JOIN ledger_entries e ON e.id = d.ledger_entry_id AND d.xmin = e.xmin AND d.cmin = e.cmin
       WHERE ${entries}`.execute(database.db);
    expect(sameStatement[0]?.n).toBe(1);
    expect(await writersOf('holds', sql`id = ANY(${holdIds}::text[])`)).toEqual({ transactions: 1, statements: 1 });
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it('answers every kind of placement and capture in a batch as alone: retries, conflicts, refusals, the wrong hold', async () => {
    for (const user of ['hk-a', 'hk-b', 'hk-c', 'hk-d', 'hk-e', 'hk-f', 'hk-g', 'hk-h']) await fund(credit(user, 40));
    await sql`INSERT INTO spend_limits (user_id, daily, monthly) VALUES ('hk-d', 10, NULL)`.execute(database.db);
    const first = placed(await alonePlace(placement('hk-a', 'hk-done', 5)));
    const released = placed(await alonePlace(placement('hk-e', 'hk-released', 5)));
    await inUnitOfWork(unitDeps(), (uow) => releaseHold(uow, { userId: 'hk-e', holdId: released.hold.id }));
    const small = placed(await alonePlace(placement('hk-f', 'hk-small', 5)));
    const done = placed(await alonePlace(placement('hk-g', 'hk-done-g', 8)));
    const firstCapture = await aloneCapture({ userId: 'hk-g', holdId: done.hold.id, amount: 3 });

    const results = await together([
      place(placement('hk-a', 'hk-done', 5)), // a retry: that hold
      place(placement('hk-b', 'hk-b-ref', 6)),
      place(placement('hk-c', 'hk-short', 41)), // more than the wallet has
      place(placement('hk-d', 'hk-limit', 11)), // past the user's daily limit
      capture('hk-e', released.hold.id), // released: not active
      capture('hk-f', small.hold.id, 6), // more than the hold
      capture('hk-g', done.hold.id, 3), // captured before: its first answer
      capture('hk-h', first.hold.id), // another user's hold
      place(placement('hk-a', 'hk-done', 7)), // the same reference, another amount: a conflict
    ]);

    expect(results.map((result) => result.kind)).toEqual([
      'existing',
      'placed',
      'insufficient',
      'spend-limit',
      'not-active',
      'too-much',
      'already',
      'not-found',
      'conflict',
    ]);
    expect(results[0]).toEqual({ ...first, kind: 'existing' });
    expect(results[2]).toEqual({ kind: 'insufficient', available: 40, requested: 41 });
    expect(results[4]).toEqual({ kind: 'not-active', status: 'released' });
    expect(results[5]).toEqual({ kind: 'too-much', amount: 5 });
    expect(results[6]).toEqual({ ...firstCapture, kind: 'already' });
    // Nothing moved for a refusal: one hold per reference, no capture of the small hold.
    const { rows } = await sql<{ user_id: string; holds: number; entries: number }>`
      SELECT u.id AS user_id, (SELECT count(*)::int FROM holds h WHERE h.user_id = u.id) AS holds,
             (SELECT count(*)::int FROM ledger_entries e WHERE e.user_id = u.id AND e.amount < 0) AS entries
        FROM users u WHERE u.id LIKE 'hk-%' ORDER BY u.id`.execute(database.db);
    expect(rows.map((row) => [row.user_id, row.holds, row.entries])).toEqual([
      ['hk-a', 1, 0],
      ['hk-b', 1, 0],
      ['hk-c', 0, 0],
      ['hk-d', 0, 0],
      ['hk-e', 1, 0],
      ['hk-f', 1, 0],
      ['hk-g', 1, 1],
      ['hk-h', 0, 0],
    ]);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it("runs a user's further operations in the same transaction, in order, each on what the one before left", async () => {
    await fund(credit('hf-a', 14));
    await fund(credit('hf-b', 10));
    const earlier = placed(await alonePlace(placement('hf-a', 'hf-a0', 4)));
    const results = await together([
      place(placement('hf-a', 'hf-a1', 6)), // available 10: placed, 4 left
      place(placement('hf-b', 'hf-b1', 3)),
      place(placement('hf-a', 'hf-a2', 5)), // 4 left: short
      capture('hf-a', earlier.hold.id, 1), // frees 3: balance 13, held 6, available 7
      place(placement('hf-a', 'hf-a3', 7)), // 7 available: placed
    ]);
    expect(results.map((result) => result.kind)).toEqual(['placed', 'placed', 'insufficient', 'ended', 'placed']);
    expect(results[2]).toEqual({ kind: 'insufficient', available: 4, requested: 5 });
    expect(ended(results[3]).answer).toMatchObject({ balance: 13, available: 7 });
    expect(placed(results[4]).available).toBe(0);
    // One transaction: its holds share its start time (now()).
    const times = await sql<{ n: number }>`
      SELECT count(DISTINCT created_at)::int AS n FROM holds WHERE reference IN ('hf-a1', 'hf-b1', 'hf-a3')`.execute(
      database.db,
    );
    expect(times.rows[0]?.n).toBe(1);
    expect(await readWalletFunds(database.db, 'hf-a', { lock: false })).toEqual({
      balance: 13,
      held: 13,
      available: 0,
    });
  });

  it('takes a reference named twice in one batch once: the second finds the first hold, a capture twice posts once', async () => {
    await fund(credit('hr-a', 20));
    await fund(credit('hr-b', 20));
    const twice = await together([
      place(placement('hr-a', 'hr-same', 5)),
      place(placement('hr-a', 'hr-same', 5)),
      place(placement('hr-b', 'hr-same', 6)), // another user's reference: a hold of its own
      place(placement('hr-a', 'hr-same', 9)),
    ]);
    expect(twice.map((result) => result.kind)).toEqual(['placed', 'existing', 'placed', 'conflict']);
    expect(placed(twice[1]).hold.id).toBe(placed(twice[0]).hold.id);
    const holdId = placed(twice[0]).hold.id;
    const captures = await together([capture('hr-a', holdId, 2), capture('hr-a', holdId, 2), capture('hr-a', holdId)]);
    expect(captures.map((result) => result.kind)).toEqual(['ended', 'already', 'already']);
    expect(ended(captures[1]).answer).toEqual(ended(captures[0]).answer);
    const entries = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ledger_entries WHERE reference = ${`hold:${holdId}:capture`}`.execute(database.db);
    expect(entries.rows[0]?.n).toBe(1);
    expect(await readWalletFunds(database.db, 'hr-a', { lock: false })).toEqual({
      balance: 18,
      held: 0,
      available: 18,
    });
  });

  it('runs a batch alone when its shared transaction fails, and a failure alone fails only its own operation', async () => {
    await fund(credit('hx-a', 20));
    await fund(credit('hx-b', 20));
    await fund(credit('hx-c', 20));
    // hx-b's reference breaks the holds' length check: the one insert of the batch fails, then alone only it does.
    const results = await holdOperationsTogether(unitDeps(), [
      place(placement('hx-a', 'hx-a1', 7)),
      place(placement('hx-b', 'x'.repeat(201), 8)),
      place(placement('hx-c', 'hx-c1', 9)),
    ]);
    expect(results.map((result) => (result instanceof BatchItemFailure ? 'failed' : result.kind))).toEqual([
      'placed',
      'failed',
      'placed',
    ]);
    expect(String((results[1] as BatchItemFailure).error)).toMatch(/holds_reference_ck/);
    const { rows } = await sql<{ user_id: string; amount: number }>`
      SELECT user_id, amount::int FROM holds WHERE user_id LIKE 'hx-%' ORDER BY user_id`.execute(database.db);
    expect(rows).toEqual([
      { user_id: 'hx-a', amount: 7 },
      { user_id: 'hx-c', amount: 9 },
    ]);
  });

  it('locks the wallets before reading them: two batches placing on one wallet never over-reserve', async () => {
    for (const user of ['hl-x', 'hl-a', 'hl-b']) await fund(credit(user, 10));
    // Another transaction holds hl-x's wallet while both batches start: each must wait for it
    // before it reads what hl-x holds, so the second reads the first's hold.
    const batches = await database.db.connection().execute(async (connection) => {
      await sql`BEGIN`.execute(connection);
      await sql`SELECT 1 FROM wallets WHERE user_id = 'hl-x' FOR UPDATE`.execute(connection);
      const running = Promise.all([
        together([place(placement('hl-x', 'hl-x1', 6)), place(placement('hl-a', 'hl-a1', 1))]),
        together([place(placement('hl-x', 'hl-x2', 6)), place(placement('hl-b', 'hl-b1', 1))]),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await sql`COMMIT`.execute(connection);
      return running;
    });
    const kinds = batches.flatMap((results) => results.map((result) => result.kind));
    expect(kinds.filter((kind) => kind === 'placed')).toHaveLength(3);
    expect(kinds.filter((kind) => kind === 'insufficient')).toHaveLength(1);
    expect(await readWalletFunds(database.db, 'hl-x', { lock: false })).toEqual({ balance: 10, held: 6, available: 4 });
  });

  it('captures and releases of one hold racing: exactly one ends it, and the other is told so', async () => {
    for (let round = 0; round < 6; round += 1) {
      const user = `hc-${round}`;
      await fund(credit(user, 30));
      await fund(credit(`${user}-other`, 30));
      const hold = placed(await alonePlace(placement(user, `hc-${round}`, 10))).hold;
      const other = placed(await alonePlace(placement(`${user}-other`, `hc-${round}-o`, 10))).hold;
      const [captures, release] = await Promise.all([
        together([capture(user, hold.id, 4), capture(`${user}-other`, other.id, 4)]),
        inUnitOfWork(unitDeps(), (uow) => releaseHold(uow, { userId: user, holdId: hold.id })),
      ]);
      const captured = captures[0] as CaptureHoldResult;
      expect(captures[1]?.kind).toBe('ended');
      if (captured.kind === 'ended') {
        expect(release).toEqual({ kind: 'not-active', status: 'captured' });
        expect(await readWalletFunds(database.db, user, { lock: false })).toEqual({
          balance: 26,
          held: 0,
          available: 26,
        });
      } else {
        expect(captured).toEqual({ kind: 'not-active', status: 'released' });
        expect(release.kind).toBe('ended');
        expect(await readWalletFunds(database.db, user, { lock: false })).toEqual({
          balance: 30,
          held: 0,
          available: 30,
        });
      }
    }
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it("captures on a wallet whose lots do not match its balance: the gap is closed first, the hold's lots drawn once", async () => {
    await fund(credit('hg-a', 30));
    await fund(credit('hg-b', 30));
    const holds = [
      placed(await alonePlace(placement('hg-a', 'hg-a1', 10))).hold,
      placed(await alonePlace(placement('hg-b', 'hg-b1', 10))).hold,
    ];
    // An entry without lots (as code before lots posted it): hg-a's balance is 5 above its lots.
    await sql`
      INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
      SELECT user_id, 'hg:old-code', 5, balance, balance + 5, 'old_code' FROM wallets WHERE user_id = 'hg-a'`.execute(
      database.db,
    );
    const results = await together([
      capture('hg-a', holds[0]?.id as string, 4),
      capture('hg-b', holds[1]?.id as string, 4),
    ]);
    expect(results.map((result) => result.kind)).toEqual(['ended', 'ended']);
    const { rows } = await sql<{ user_id: string; source: string; remaining: number }>`
      SELECT user_id, source, remaining::int FROM credit_lots WHERE user_id IN ('hg-a', 'hg-b') ORDER BY user_id, id`.execute(
      database.db,
    );
    expect(rows.map((row) => [row.user_id, row.source.startsWith('lot:opening:'), row.remaining])).toEqual([
      ['hg-a', false, 26],
      ['hg-a', true, 5],
      ['hg-b', false, 26],
    ]);
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });
});
