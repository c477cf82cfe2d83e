import { createAppWebhookSender, type Provider } from '@tally/billing-core';
import { sql } from 'kysely';
import { workerEnvSchema } from '../../../apps/worker/src/config';
import { workerSettingsFrom } from '../../../apps/worker/src/settings-from-config';
import { newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { freePort } from '../../support/ports';
import { suiteStack } from '../../support/suite';

describe('retention: raw bodies of old finished events are pruned, rows and ledger stay; old app webhook messages go', () => {
  const stack = suiteStack();

  /** An inbox row in a given state, finished `daysAgo` days ago (by the database clock). */
  const row = async (
    name: string,
    status: 'received' | 'processing' | 'processed' | 'failed' | 'ignored',
    daysAgo: number,
    options: { provider?: Provider; type?: string } = {},
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

  it('the retention role deletes app webhook messages past APP_WEBHOOK_RETENTION_DAYS: delivered ones, and undelivered ones without APP_WEBHOOK_URL', async () => {
    // The worker's settings as its composition root makes them from the environment.
    const settings = workerSettingsFrom(
      workerEnvSchema.parse({ DATABASE_URL: 'postgres://unused', APP_WEBHOOK_RETENTION_DAYS: '7' }),
    );
    expect(settings.appWebhooks.retentionDays).toBe(7);
    const userId = 'user-app-webhook-retention';
    const ages = {
      deliveredOld: ['delivered', 8],
      deliveredRecent: ['delivered', 6],
      failedOld: ['failed', 8],
      pendingOld: ['pending', 8],
      pendingRecent: ['pending', 6],
    } as const;
    const ids: Record<string, number> = {};
    for (const [name, [status, daysAgo]] of Object.entries(ages)) {
      const entry = await stack.postPlainEntry({
        userId,
        reference: `test:retention:${name}`,
        amount: 1,
        reason: 'test_grant',
      });
      const message = await stack.db
        .updateTable('app_webhook_messages')
        .set({
          status,
          created_at: sql<Date>`now() - make_interval(days => ${daysAgo})`,
          delivered_at: status === 'delivered' ? sql<Date>`now() - make_interval(days => ${daysAgo})` : null,
        })
        .where('ledger_entry_id', '=', entry.entry.id)
        .returning('id')
        .executeTakeFirstOrThrow();
      ids[name] = message.id;
    }
    const left = async () =>
      (
        await stack.db
          .selectFrom('app_webhook_messages')
          .select('id')
          .where('user_id', '=', userId)
          .orderBy('id')
          .execute()
      ).map((row) => row.id);
    const retention = { ...settings.retention, intervalMs: 60_000 };

    // With APP_WEBHOOK_URL (a sender): only delivered messages past the 7 days go.
    const delivering = stack.startWorker({
      roles: ['retention'],
      retention,
      appWebhooks: {
        retentionDays: settings.appWebhooks.retentionDays,
        sender: createAppWebhookSender({
          url: `http://127.0.0.1:${await freePort()}/never-called`,
          secrets: [newWebhookSecret()],
          timeoutMs: 1_000,
        }),
      },
    });
    await delivering.loops.retention?.runOnce();
    expect(await left()).toEqual([ids.deliveredRecent, ids.failedOld, ids.pendingOld, ids.pendingRecent]);
    await stack.stopWorkers();

    // Without it nothing will deliver the others: undelivered ones past the 7 days go too.
    const writingOnly = stack.startWorker({
      roles: ['retention'],
      retention,
      appWebhooks: { retentionDays: settings.appWebhooks.retentionDays, sender: undefined },
    });
    await writingOnly.loops.retention?.runOnce();
    expect(await left()).toEqual([ids.deliveredRecent, ids.pendingRecent]);
    await stack.stopWorkers();
  });
});
