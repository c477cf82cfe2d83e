import type { FakeStripe } from '../support/fakes/fake-stripe';
import { basicAuth } from '../support/parked-events';
import { adminKey, signStripe, startStackWithFakeStripe, type TestStack } from '../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../support/stripe-events';

describe('the console over Stripe: search by a Stripe id, reconciliation from its form', () => {
  let stack: TestStack;
  let fake: FakeStripe;

  beforeAll(async () => {
    ({ stack, fake } = await startStackWithFakeStripe());
    stack.startWorker();
  });
  afterAll(() => stack.stop());

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
      .execute();
    expect(rows).toEqual([
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
});
