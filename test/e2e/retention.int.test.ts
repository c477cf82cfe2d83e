import { sql } from 'kysely';
import { TestStack } from '../support/stack';

describe('retention: raw bodies of old finished events are pruned, rows and ledger stay', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack.stop());

  /** An inbox row in a given state, finished `daysAgo` days ago (by the database clock). */
  const row = async (
    name: string,
    status: 'received' | 'processing' | 'processed' | 'failed' | 'ignored',
    daysAgo: number,
    options: { provider?: 'stripe' | 'revenuecat'; type?: string } = {},
  ) => {
    const inserted = await stack.db
      .insertInto('inbox_events')
      .values({
        provider: options.provider ?? 'stripe',
        provider_event_id: `evt_retention_${name}`,
        type: options.type ?? 'payment_intent.succeeded',
        livemode: false,
        environment: 'sandbox',
        user_id: `user-${name}`,
        provider_customer_id: null,
        provider_subscription_id: null,
        provider_payment_intent_id: `pi_${name}`,
        provider_invoice_id: null,
        raw_body: JSON.stringify({ id: `evt_retention_${name}` }),
        status,
        outcome_code: status === 'processed' ? 'credited' : null,
        received_at: sql<Date>`now() - make_interval(days => ${daysAgo})`,
        processed_at:
          status === 'processed' || status === 'ignored' ? sql<Date>`now() - make_interval(days => ${daysAgo})` : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return inserted.id;
  };

  it('prunes only processed and ignored events older than the retention; the row, its ids and the ledger stay', async () => {
    const ids = {
      oldProcessed: await row('old-processed', 'processed', 100),
      oldIgnored: await row('old-ignored', 'ignored', 91),
      oldFailed: await row('old-failed', 'failed', 100),
      oldReceived: await row('old-received', 'received', 100),
      oldProcessing: await row('old-processing', 'processing', 100),
      recentProcessed: await row('recent-processed', 'processed', 89),
      // Read again by later refunds: kept whatever its age.
      oldRevenueCatPurchase: await row('old-rc-purchase', 'processed', 200, {
        provider: 'revenuecat',
        type: 'NON_RENEWING_PURCHASE',
      }),
    };
    await stack.db.insertInto('users').values({ id: 'user-old-processed' }).execute();
    await stack.db.insertInto('wallets').values({ user_id: 'user-old-processed' }).execute();
    await stack.db
      .insertInto('ledger_entries')
      .values({
        user_id: 'user-old-processed',
        reference: 'stripe:payment:pi_old-processed',
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: ids.oldProcessed,
      })
      .execute();
    const ledgerBefore = await stack.db.selectFrom('ledger_entries').selectAll().execute();

    const worker = stack.startWorker({
      roles: ['retention'],
      retention: { intervalMs: 60_000, retentionDays: 90, idempotencyKeyTtlHours: 24 },
    });
    await worker.loops.retention?.runOnce();

    const rows = await stack.db
      .selectFrom('inbox_events')
      .select(['id', 'provider_event_id', 'provider_payment_intent_id', 'status', 'raw_body', 'raw_body_pruned_at'])
      .orderBy('id')
      .execute();
    const pruned = rows.filter((r) => r.raw_body === null).map((r) => r.id);
    expect(pruned.sort()).toEqual([ids.oldProcessed, ids.oldIgnored].sort());
    for (const r of rows) {
      expect(r.raw_body_pruned_at === null).toBe(r.raw_body !== null);
      // Ids and status stay on every row.
      expect(r.provider_event_id).toMatch(/^evt_retention_/);
      expect(r.provider_payment_intent_id).toMatch(/^pi_/);
    }
    expect(rows.find((r) => r.id === ids.oldProcessed)?.status).toBe('processed');
    expect(await stack.db.selectFrom('ledger_entries').selectAll().execute()).toEqual(ledgerBefore);

    // A second pass finds nothing more; a pruned event cannot be replayed (there is nothing to parse).
    await worker.loops.retention?.runOnce();
    expect(
      (await stack.db.selectFrom('inbox_events').select('id').where('raw_body', 'is', null).execute()).length,
    ).toBe(2);
    const replay = await stack.apiRequest(`/admin/events/${ids.oldProcessed}/replay`, { method: 'POST' });
    expect(replay.status).toBe(409);
    const shown = await (await stack.apiRequest(`/admin/events/${ids.oldProcessed}`)).json();
    expect(shown).toMatchObject({ rawBody: null, source: 'webhook', rawBodyPrunedAt: expect.any(String) });
    await stack.stopWorkers();
  });
});
