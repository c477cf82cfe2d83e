import { sql } from 'kysely';
import { runCli } from '../../support/built-process';
import { fakeStripeSecretKey } from '../../support/fakes/fake-stripe';
import { basicAuth } from '../../support/parked-events';
import { adminKey, readJson, signStripe } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';
import { suiteStackWithFakeStripe } from '../../support/suite';

describe('the console over Stripe: search by a Stripe id, reconciliation from its form', () => {
  const { stack, fake } = suiteStackWithFakeStripe({ worker: {} });

  const consoleFetch = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${stack.api.port}/admin/console${path}`, {
      redirect: 'manual',
      ...init,
      headers: { authorization: basicAuth('ops', adminKey), ...(init.headers as Record<string, string>) },
    });
  const packEvent = (userId: string, paymentIntentId: string, customer = stripeId('cus')) => {
    const body = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: paymentIntentId, userId, customer }),
    );
    fake.putEvent(JSON.parse(body));
    return { body, eventId: JSON.parse(body).id as string };
  };

  it('a Stripe payment intent or customer id opens the user who paid, whose page lists the payment and its credit', async () => {
    const userId = stripeId('user');
    const intent = stripeId('pi');
    const customer = stripeId('cus');
    const paid = packEvent(userId, intent, customer);
    expect((await stack.postStripe(paid.body, signStripe(paid.body))).status).toBe(200);
    expect((await stack.finishedInboxRow('stripe', paid.eventId)).status).toBe('processed');

    for (const id of [intent, customer]) {
      const found = await consoleFetch(`/search?q=${encodeURIComponent(id)}`);
      expect({ id, status: found.status, location: found.headers.get('location') }).toEqual({
        id,
        status: 303,
        location: `/admin/console/users/${encodeURIComponent(userId)}`,
      });
    }
    const page = await (await consoleFetch(`/users/${encodeURIComponent(userId)}`)).text();
    expect(page).toContain(intent);
    expect(page).toContain(`stripe:payment:${intent}`);
  });

  it('runs a reconciliation from its form (same origin), shows the backfilled event and audits the run', async () => {
    const lost = packEvent(stripeId('user'), stripeId('pi'));
    const response = await consoleFetch('/reconcile', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: `http://127.0.0.1:${stack.api.port}`,
        'sec-fetch-site': 'same-origin',
      },
      body: 'windowDays=3',
    });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('Missing events (1)');
    expect(page).toContain(lost.eventId);
    expect(page).toContain('ingested');
    expect((await stack.finishedInboxRow('stripe', lost.eventId)).status).toBe('processed');

    const rows = await stack.db
      .selectFrom('admin_audit')
      .selectAll()
      .where('action', '=', 'reconcile.stripe')
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      // Written before the run (it spans Stripe calls), then the answer.
      expect.objectContaining({
        surface: 'console',
        method: 'POST',
        path: '/admin/console/reconcile',
        request: { params: {}, body: { windowDays: '3' } },
        status_code: null,
        outcome: 'started',
        answer: null,
      }),
      expect.objectContaining({
        surface: 'console',
        method: 'POST',
        path: '/admin/console/reconcile',
        request: { params: {}, body: { windowDays: '3' } },
        status_code: 200,
        outcome: 'ok',
        answer: expect.objectContaining({ ok: false, dryRun: false, windowDays: 3, missingEvents: 1 }),
      }),
    ]);
  });

  it('runs no reconciliation, from the API, the console or the CLI, when its audit row cannot be written', async () => {
    const lost = packEvent(stripeId('user'), stripeId('pi'));
    // In this test's own database: every audit row refused.
    await sql`CREATE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit row refused'; END; $$`.execute(stack.db);
    await sql`CREATE TRIGGER test_refuse_audit_trg BEFORE INSERT ON admin_audit
      FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()`.execute(stack.db);
    try {
      const auditBefore = await stack.db.selectFrom('admin_audit').selectAll().orderBy('id').execute();
      const stripeCallsBefore = fake.requests.length;

      const api = await stack.apiRequest('/admin/reconcile/stripe', { method: 'POST', body: { windowDays: 3 } });
      expect({ status: api.status, body: await readJson(api) }).toEqual({
        status: 503,
        body: { error: { code: 'audit_unavailable', message: expect.any(String) } },
      });
      const form = await consoleFetch('/reconcile', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: `http://127.0.0.1:${stack.api.port}`,
          'sec-fetch-site': 'same-origin',
        },
        body: 'windowDays=3',
      });
      expect(form.status).toBe(503);
      const cli = await runCli(['reconcile', '--days', '3', '--json'], {
        DATABASE_URL: stack.database.url,
        REDIS_URL: 'redis://127.0.0.1:6379',
        QUEUE_PREFIX: stack.prefix,
        STRIPE_SECRET_KEY: fakeStripeSecretKey,
        STRIPE_API_BASE_URL: fake.baseUrl,
      });
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain('audit row refused');

      // Nothing ran: Stripe was never asked, the lost event is still missing, no row was written.
      expect(fake.requests.slice(stripeCallsBefore)).toEqual([]);
      expect(await stack.inboxRows('stripe', lost.eventId)).toEqual([]);
      expect(await stack.db.selectFrom('admin_audit').selectAll().orderBy('id').execute()).toEqual(auditBefore);
    } finally {
      await sql`DROP TRIGGER test_refuse_audit_trg ON admin_audit`.execute(stack.db);
      await sql`DROP FUNCTION test_refuse_audit()`.execute(stack.db);
    }
  });
});
