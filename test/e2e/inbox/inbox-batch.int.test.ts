import {
  findWallet,
  type InboxProcessorDeps,
  type ProcessInboxEventResult,
  parseRevenueCatWebhook,
  processInboxEvents,
  recordInboxEvent,
  toRevenueCatInboxDraft,
  toStripeInboxDraftFromBody,
  USER_LOCK_NAMESPACE,
  verifyLedger,
} from '@tally/billing-core';
import { sql } from 'kysely';
import pg from 'pg';
import { firstRun } from '../../support/engine';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../../support/events';
import { ledgerOf } from '../../support/ledger';
import { eventually } from '../../support/stack';
import { suiteStack } from '../../support/suite';

/**
 * processInboxEvents with first-run facts: several first runs in one transaction (docs/engine.md,
 * "One attempt path"). Every test checks the money (ledger and wallet) and the rows, not only the
 * results.
 */
describe('inbox first runs coalesced into one transaction', () => {
  const stack = suiteStack();

  async function recordPurchase(id: string, userId: string): Promise<number> {
    const body = revenueCatTokenPurchase({ id, userId });
    const recorded = await recordInboxEvent(stack.db, toRevenueCatInboxDraft(parseRevenueCatWebhook(body), body));
    if (recorded.kind !== 'recorded') throw new Error('expected a new row');
    return recorded.inboxEventId;
  }

  const pathOf = (result: ProcessInboxEventResult) => ('path' in result ? result.path : result.kind);

  async function rowOf(id: number) {
    return stack.db
      .selectFrom('inbox_events')
      .select(['status', 'attempts', 'outcome_code'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  }

  /** A copy of the stack's deps whose RevenueCat handler runs `around` instead of its apply. */
  function withApply(
    around: (
      apply: InboxProcessorDeps['handlers']['revenuecat']['apply'],
      ...args: Parameters<InboxProcessorDeps['handlers']['revenuecat']['apply']>
    ) => ReturnType<InboxProcessorDeps['handlers']['revenuecat']['apply']>,
  ): InboxProcessorDeps {
    const deps = stack.processorDeps();
    const handler = deps.handlers.revenuecat;
    return {
      ...deps,
      handlers: { ...deps.handlers, revenuecat: { ...handler, apply: (...args) => around(handler.apply, ...args) } },
    };
  }

  it('credits every event once in one transaction, two events of one user one after the other, results in order', async () => {
    const ids = [
      await recordPurchase('batch-a1', 'batch-user-a'),
      await recordPurchase('batch-b1', 'batch-user-b'),
      await recordPurchase('batch-a2', 'batch-user-a'),
    ];
    const results = await processInboxEvents(stack.processorDeps(), ids, firstRun);
    expect(results.map((result) => [result.kind, pathOf(result)])).toEqual([
      ['processed', 'batch'],
      ['processed', 'batch'],
      ['processed', 'batch'],
    ]);
    results.forEach((result, index) => {
      if (result.kind !== 'processed') throw new Error('expected processed');
      expect(result.row.id).toBe(ids[index]);
      expect(result.row).toMatchObject({ status: 'processed', attempts: 1, outcome_code: 'credited' });
    });
    for (const id of ids)
      expect(await rowOf(id)).toEqual({ status: 'processed', attempts: 1, outcome_code: 'credited' });
    expect(await ledgerOf(stack.db, 'batch-user-a', ['reference', 'balance_before', 'balance_after'])).toEqual([
      { reference: 'revenuecat:event:batch-a1', balance_before: 0, balance_after: 100 },
      { reference: 'revenuecat:event:batch-a2', balance_before: 100, balance_after: 200 },
    ]);
    expect(await findWallet(stack.db, 'batch-user-b')).toEqual({ userId: 'batch-user-b', balance: 100 });
    // One transaction: the three finishes carry the same transaction timestamp.
    const stamps = await stack.db
      .selectFrom('inbox_events')
      .select(sql<number>`count(DISTINCT processed_at)`.as('n'))
      .where('id', 'in', ids)
      .executeTakeFirstOrThrow();
    expect(Number(stamps.n)).toBe(1);
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it("posts the batch's credits of distinct users in one statement, and each event still says what its own credit did", async () => {
    // One user already has a wallet and lots; the other two are new (each wallet comes with its id's link).
    const seeded = await recordPurchase('together-seed', 'together-user-a');
    await processInboxEvents(stack.processorDeps(), [seeded], firstRun);
    const ids = [
      await recordPurchase('together-a', 'together-user-a'),
      await recordPurchase('together-b', 'together-user-b'),
      await recordPurchase('together-c', 'together-user-c'),
    ];
    const results = await processInboxEvents(stack.processorDeps(), ids, firstRun);
    expect(results.map((result) => [result.kind, pathOf(result), 'code' in result ? result.code : null])).toEqual([
      ['processed', 'batch', 'credited'],
      ['processed', 'batch', 'credited'],
      ['processed', 'batch', 'credited'],
    ]);
    const references = ['together-a', 'together-b', 'together-c'].map((id) => `revenuecat:event:${id}`);
    // The command of the transaction that inserted each entry: one INSERT for the three.
    const { rows } = await sql<{ n: number }>`
      SELECT count(DISTINCT cmin::text)::int AS n FROM ledger_entries WHERE reference = ANY(${references}::text[])`.execute(
      stack.db,
    );
    expect(rows[0]?.n).toBe(1);
    expect(await ledgerOf(stack.db, 'together-user-a', ['reference', 'balance_before', 'balance_after'])).toEqual([
      { reference: 'revenuecat:event:together-seed', balance_before: 0, balance_after: 100 },
      { reference: 'revenuecat:event:together-a', balance_before: 100, balance_after: 200 },
    ]);
    expect(await findWallet(stack.db, 'together-user-b')).toEqual({ userId: 'together-user-b', balance: 100 });
    expect(await findWallet(stack.db, 'together-user-c')).toEqual({ userId: 'together-user-c', balance: 100 });
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it("posts a batch's Stripe pack credits in one statement too", async () => {
    const ids: number[] = [];
    for (const user of ['stripe-together-a', 'stripe-together-b', 'stripe-together-c']) {
      const body = stripeTokenPackPayment({ eventId: `evt_${user}`, paymentIntentId: `pi_${user}`, userId: user });
      const recorded = await recordInboxEvent(stack.db, toStripeInboxDraftFromBody(body));
      if (recorded.kind !== 'recorded') throw new Error('expected a new row');
      ids.push(recorded.inboxEventId);
    }
    const results = await processInboxEvents(stack.processorDeps(), ids, firstRun);
    expect(results.map((result) => [result.kind, pathOf(result), 'code' in result ? result.code : null])).toEqual([
      ['processed', 'batch', 'credited'],
      ['processed', 'batch', 'credited'],
      ['processed', 'batch', 'credited'],
    ]);
    const references = ['a', 'b', 'c'].map((user) => `stripe:payment:pi_stripe-together-${user}`);
    const { rows } = await sql<{ n: number; entries: number }>`
      SELECT count(DISTINCT cmin::text)::int AS n, count(*)::int AS entries
        FROM ledger_entries WHERE reference = ANY(${references}::text[])`.execute(stack.db);
    expect(rows[0]).toEqual({ n: 1, entries: 3 });
  });

  it('makes the pending credits before an apply that may read them, and only then', async () => {
    const ids = [
      await recordPurchase('ahead-1', 'ahead-user'),
      await recordPurchase('ahead-2', 'ahead-user'),
      await recordPurchase('ahead-3', 'ahead-user'),
    ];
    // The second event's apply says it may read what a posting writes (as an invoice or a top-up
    // does): it must see the first event's credit. The third runs ahead (a pack): it sees the
    // second's credit still pending.
    const seen = new Map<number, number>();
    const base = stack.processorDeps();
    const handler = base.handlers.revenuecat;
    const deps: InboxProcessorDeps = {
      ...base,
      handlers: {
        ...base.handlers,
        revenuecat: {
          ...handler,
          prepare(row, ctx) {
            const preparation = handler.prepare(row, ctx);
            return { ...preparation, touchesLedger: preparation.touchesLedger || seen.size === 1 };
          },
          async apply(uow, row, prepared) {
            const wallet = await uow.trx
              .selectFrom('wallets')
              .select('balance')
              .where('user_id', '=', 'ahead-user')
              .executeTakeFirst();
            seen.set(row.id, wallet?.balance ?? 0);
            return handler.apply(uow, row, prepared);
          },
        },
      },
    };
    const results = await processInboxEvents(deps, ids, firstRun);
    expect(results.map((result) => [result.kind, pathOf(result)])).toEqual([
      ['processed', 'batch'],
      ['processed', 'batch'],
      ['processed', 'batch'],
    ]);
    expect(ids.map((id) => seen.get(id))).toEqual([0, 100, 100]);
    expect(await ledgerOf(stack.db, 'ahead-user', ['reference', 'balance_after'])).toEqual([
      { reference: 'revenuecat:event:ahead-1', balance_after: 100 },
      { reference: 'revenuecat:event:ahead-2', balance_after: 200 },
      { reference: 'revenuecat:event:ahead-3', balance_after: 300 },
    ]);
  });

  it('rolls the whole batch back when one event fails: the others credit alone, the failure counts once', async () => {
    const good = await recordPurchase('batch-good', 'batch-good-user');
    const bad = await recordPurchase('batch-bad', 'batch-bad-user');
    const deps = withApply(async (apply, uow, row, prepared) => {
      const result = await apply(uow, row, prepared);
      // Writes its effects (the claim; its credit is handed back to the engine), then fails: nothing of it may stay.
      if (row.id === bad) throw new Error('failed after crediting, inside the transaction');
      return result;
    });
    const [goodResult, badResult] = await processInboxEvents(deps, [good, bad], firstRun);
    expect(goodResult).toMatchObject({ kind: 'processed', path: 'one-transaction' });
    expect(badResult).toMatchObject({ kind: 'failed', parked: false, code: 'error' });
    expect(await rowOf(good)).toEqual({ status: 'processed', attempts: 1, outcome_code: 'credited' });
    expect(await rowOf(bad)).toMatchObject({ status: 'received', attempts: 1 });
    expect(await ledgerOf(stack.db, 'batch-bad-user', ['reference'])).toEqual([]);
    expect(await ledgerOf(stack.db, 'batch-good-user', ['reference'])).toEqual([
      { reference: 'revenuecat:event:batch-good' },
    ]);
  });

  it('never commits over a row another run claimed after the batch read it', async () => {
    const first = await recordPurchase('batch-claimed-1', 'batch-claimed-user-1');
    const taken = await recordPurchase('batch-claimed-2', 'batch-claimed-user-2');
    let claimed = false;
    const deps = withApply(async (apply, uow, row, prepared) => {
      // Between the batch's read and its mark, another run claims `taken` (a claim takes no user
      // lock, so it does not wait for the batch).
      if (!claimed) {
        claimed = true;
        // What claimInboxEvent does to a fresh row.
        const claim = await sql`
          UPDATE inbox_events SET status = 'processing', attempts = attempts + 1, updated_at = now()
           WHERE id = ${taken} AND status = 'received'`.execute(stack.db);
        expect(claim.numAffectedRows).toBe(1n);
      }
      return apply(uow, row, prepared);
    });
    const results = await processInboxEvents(deps, [first, taken], firstRun);
    expect(results.map(pathOf)).not.toContain('batch');
    expect(results[0]).toMatchObject({ kind: 'processed', path: 'one-transaction' });
    // The claimed row: its first run found it claimed and ran the claimed path (attempt 2).
    expect(results[1]).toMatchObject({ kind: 'processed', path: 'claimed' });
    expect(await rowOf(taken)).toEqual({ status: 'processed', attempts: 2, outcome_code: 'credited' });
    for (const user of ['batch-claimed-user-1', 'batch-claimed-user-2']) {
      expect(await findWallet(stack.db, user)).toEqual({ userId: user, balance: 100 });
    }
  });

  it('leaves finished rows alone and runs an id given twice once', async () => {
    const done = await recordPurchase('batch-done', 'batch-done-user');
    await processInboxEvents(stack.processorDeps(), [done], firstRun);
    const fresh = await recordPurchase('batch-fresh', 'batch-fresh-user');
    const results = await processInboxEvents(stack.processorDeps(), [done, fresh, fresh], firstRun);
    expect(results.map((result) => [result.kind, pathOf(result)])).toEqual([
      ['skipped', 'skipped'],
      ['processed', 'batch'],
      ['skipped', 'skipped'],
    ]);
    expect(await findWallet(stack.db, 'batch-done-user')).toEqual({ userId: 'batch-done-user', balance: 100 });
    expect(await findWallet(stack.db, 'batch-fresh-user')).toEqual({ userId: 'batch-fresh-user', balance: 100 });
  });

  it('takes its users’ locks in key order, so two batches naming the same users in opposite order do not deadlock', async () => {
    // Two users; `low` is the one whose lock key (hashtext) is smaller.
    const users = ['batch-lock-user-x', 'batch-lock-user-y'];
    const keys = await sql<{ user: string; key: number }>`
      SELECT u AS user, hashtext(u) AS key FROM unnest(${users}::text[]) AS u ORDER BY 2`.execute(stack.db);
    const [low, high] = keys.rows.map((row) => row.user) as [string, string];
    const highKey = (keys.rows[1] as { key: number }).key;
    // Batch A's rows in id order name low then high; batch B's high then low.
    const a = [await recordPurchase('batch-lock-a1', low), await recordPurchase('batch-lock-a2', high)];
    const b = [await recordPurchase('batch-lock-b1', high), await recordPurchase('batch-lock-b2', low)];

    const holder = new pg.Client({ connectionString: stack.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [USER_LOCK_NAMESPACE, highKey]);
      // B first, and queued behind the held lock before A starts: locking in its rows' order, B
      // would then hold `high` while A holds `low`, each waiting for the other.
      const batchB = processInboxEvents(stack.processorDeps(), b, firstRun);
      await eventually(
        'batch B waiting for the held lock',
        async () => (await waitingAdvisoryLocks(holder)) === 1,
        5_000,
      );
      const batchA = processInboxEvents(stack.processorDeps(), a, firstRun);
      await eventually('batch A waiting too', async () => (await waitingAdvisoryLocks(holder)) === 2, 5_000);
      await holder.query('COMMIT');
      const results = [...(await batchB), ...(await batchA)];
      // A deadlock would have failed one batch, whose events would then have run alone.
      expect(results.map(pathOf)).toEqual(['batch', 'batch', 'batch', 'batch']);
    } finally {
      await holder.end();
    }
    for (const user of users) expect(await findWallet(stack.db, user)).toEqual({ userId: user, balance: 200 });
  });

  it('runs a batch of one as the one-event first run', async () => {
    const id = await recordPurchase('batch-single', 'batch-single-user');
    const [result] = await processInboxEvents(stack.processorDeps(), [id], firstRun);
    expect(result).toMatchObject({ kind: 'processed', path: 'one-transaction' });
  });
});

async function waitingAdvisoryLocks(client: pg.Client): Promise<number> {
  const found = await client.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
  );
  return Number(found.rows[0]?.n ?? 0);
}
