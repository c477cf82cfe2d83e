import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../support/events';
import { appKey, eventually, type Json, readJson, signStripe, TestStack } from '../support/stack';

const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'apps', 'cli', 'dist', 'main.js');

describe('the support view: GET /admin/users/{userId} and tally user <id>', () => {
  let stack: TestStack;
  const userId = 'support-user';

  beforeAll(async () => {
    stack = await TestStack.start();
    stack.startWorker();
    // A credit from each provider, an event parked for good (unknown pack), and another user's event.
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-support-1', userId }));
    const paid = stripeTokenPackPayment({ eventId: 'evt_support_paid', paymentIntentId: 'pi_support_paid', userId });
    await stack.postStripe(paid, signStripe(paid));
    const unknownPack = stripeTokenPackPayment({
      eventId: 'evt_support_unknown_pack',
      paymentIntentId: 'pi_support_unknown_pack',
      userId,
      packId: 'no_such_pack',
    });
    await stack.postStripe(unknownPack, signStripe(unknownPack));
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-support-other', userId: 'someone-else' }));
    await eventually('every event to finish', async () => {
      const rows = await stack.db.selectFrom('inbox_events').select('status').execute();
      return rows.length === 4 && rows.every((row) => row.status !== 'received' && row.status !== 'processing');
    });
    await stack.stopWorkers();
  });
  afterAll(() => stack.stop());

  it('gives events with errors first, the ledger with its balance, linked ids and empty sections in one call', async () => {
    const response = await stack.apiRequest(`/admin/users/${userId}`);
    expect(response.status).toBe(200);
    const view: Json = await readJson(response);

    expect(Object.keys(view).sort()).toEqual(
      ['events', 'ledger', 'linkedIds', 'payments', 'studioRequests', 'subscription', 'userId', 'wallet'].sort(),
    );
    expect(view.userId).toBe(userId);
    expect(view.wallet).toEqual({ balance: 200, createdAt: expect.any(String) });

    // Parked first, then the newest; another user's event is not there; no raw bodies.
    expect(view.events.total).toBe(3);
    expect(view.events.truncated).toBe(false);
    expect(
      view.events.items.map((event: Json) => [
        event.providerEventId,
        event.status,
        event.attention,
        event.outcome.code,
      ]),
    ).toEqual([
      ['evt_support_unknown_pack', 'failed', 'parked', 'invalid_event'],
      ['evt_support_paid', 'processed', 'none', 'credited'],
      ['rc-support-1', 'processed', 'none', 'credited'],
    ]);
    expect(view.events.items[0].lastError).toContain('no_such_pack');
    expect(view.events.items.every((event: Json) => !('rawBody' in event) && !('raw_body' in event))).toBe(true);

    expect(view.ledger).toMatchObject({ total: 2, truncated: false, sum: 200, matchesBalance: true });
    expect(
      view.ledger.entries.map((entry: Json) => [
        entry.reference,
        entry.amount,
        entry.balanceBefore,
        entry.balanceAfter,
      ]),
    ).toEqual([
      ['stripe:payment:pi_support_paid', 100, 100, 200],
      ['revenuecat:event:rc-support-1', 100, 0, 100],
    ]);

    expect(view.subscription).toBeNull();
    expect(view.payments).toEqual([]);
    expect(view.studioRequests).toEqual([]);
    expect(view.linkedIds.map((linked: Json) => [linked.provider, linked.kind, linked.id]).sort()).toEqual(
      [
        // RevenueCat's customer is its original_app_user_id, here the user itself.
        ['revenuecat', 'customer', userId],
        ['stripe', 'customer', 'cus_test_1'],
        ['stripe', 'payment_intent', 'pi_support_paid'],
        ['stripe', 'payment_intent', 'pi_support_unknown_pack'],
      ].sort(),
    );
  });

  it('answers an empty view for a user Tally has never seen', async () => {
    const view: Json = await readJson(await stack.apiRequest('/admin/users/never-seen'));
    expect(view).toEqual({
      userId: 'never-seen',
      wallet: { balance: 0, createdAt: null },
      events: { items: [], total: 0, truncated: false },
      ledger: { entries: [], total: 0, truncated: false, sum: 0, matchesBalance: true },
      subscription: null,
      payments: [],
      studioRequests: [],
      linkedIds: [],
    });
  });

  it('limits the lists and says so', async () => {
    const view: Json = await readJson(await stack.apiRequest(`/admin/users/${userId}?eventLimit=1&ledgerLimit=1`));
    expect(view.events).toMatchObject({ total: 3, truncated: true });
    expect(view.events.items.map((event: Json) => event.attention)).toEqual(['parked']);
    expect(view.ledger).toMatchObject({ total: 2, truncated: true, sum: 200, matchesBalance: true });
    expect(view.ledger.entries).toHaveLength(1);
  });

  it('is admin only', async () => {
    expect((await stack.apiRequest(`/admin/users/${userId}`, { key: null })).status).toBe(401);
    expect((await stack.apiRequest(`/admin/users/${userId}`, { key: appKey })).status).toBe(401);
  });

  it('tally events show prints one event with its raw body, and exits 1 for an unknown id', async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run the tests through \`pnpm test\`, which builds first`);
    const env = { PATH: process.env.PATH ?? '', DATABASE_URL: stack.database.url };
    const [row] = await stack.inboxRows('stripe', 'evt_support_unknown_pack');
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, 'events', 'show', ...args], { env, cwd: path.join(root, 'test') });

    const json = JSON.parse((await run([String(row?.id), '--json'])).stdout);
    expect(json).toMatchObject({ id: row?.id, provider_event_id: 'evt_support_unknown_pack', status: 'failed' });
    expect(JSON.parse(json.raw_body).data.object.metadata.pack_id).toBe('no_such_pack');

    const text = (await run([String(row?.id)])).stdout;
    expect(text).toMatch(/^PROVIDER_EVENT_ID\s+evt_support_unknown_pack$/m);
    expect(text).toContain('RAW BODY');
    expect(text).toContain('"pack_id": "no_such_pack"');

    await expect(run(['999999'])).rejects.toMatchObject({ code: 1, stderr: 'inbox event 999999 does not exist\n' });
  });

  it('tally user prints the same view as JSON, and as plain-text tables with headers', async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run the tests through \`pnpm test\`, which builds first`);
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, 'user', userId, ...args], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: stack.database.url },
        cwd: path.join(root, 'test'),
      });
    const api: Json = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    const json = await run(['--json']);
    expect(JSON.parse(json.stdout)).toEqual(api);

    const text = (await run([])).stdout;
    expect(text).toContain('wallet balance 200; ledger sum 200 over 2 entries');
    const lines = text.split('\n');
    const eventsHeader = lines.findIndex((line) => line.startsWith('ID') && line.includes('ATTENTION'));
    expect(eventsHeader).toBeGreaterThan(0);
    expect(lines[eventsHeader + 1]).toMatch(/parked\s+stripe\s+evt_support_unknown_pack/);
    expect(text).toMatch(/REFERENCE\s+AMOUNT\s+BEFORE\s+AFTER/);
    expect(text).toContain('stripe:payment:pi_support_paid');
  });
});
