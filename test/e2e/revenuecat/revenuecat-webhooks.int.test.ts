import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findWallet, verifyLedger } from '@tally/billing-core';
import { revenueCatTokenPurchase } from '../../support/events';
import { eventually, readJson } from '../../support/stack';
import { suiteStack } from '../../support/suite';

const fixtures = path.resolve(__dirname, '../../fixtures/revenuecat');

describe('RevenueCat webhooks', () => {
  const stack = suiteStack({ worker: {} });

  const rowsFor = (providerEventId: string) => stack.inboxRows('revenuecat', providerEventId);

  it('credits a token pack once when the same event arrives 20 times at once', async () => {
    const eventId = 'rc-evt-concurrent-1';
    const body = revenueCatTokenPurchase({ id: eventId, userId: 'rc-concurrent-user' });

    const responses = await Promise.all(Array.from({ length: 20 }, () => stack.postRevenueCat(body)));
    const answers = await Promise.all(
      responses.map(async (response) => ({ status: response.status, body: await readJson(response) })),
    );

    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.body.status === 'accepted')).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.status === 'duplicate')).toHaveLength(19);
    expect(answers.every((answer) => answer.body.eventId === eventId)).toBe(true);

    const [row] = await eventually('the event to be processed', async () => {
      const rows = await rowsFor(eventId);
      return rows[0]?.status === 'processed' ? rows : undefined;
    });
    expect(await rowsFor(eventId)).toHaveLength(1);
    expect(row).toMatchObject({
      type: 'NON_RENEWING_PURCHASE',
      user_id: 'rc-concurrent-user',
      attempts: 1,
      last_error: null,
    });

    const ledger = await stack.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('user_id', '=', 'rc-concurrent-user')
      .execute();
    expect(ledger).toEqual([
      expect.objectContaining({
        reference: `revenuecat:event:${eventId}`,
        amount: 100,
        balance_before: 0,
        balance_after: 100,
        reason: 'token_pack_purchase',
        inbox_event_id: row?.id,
      }),
    ]);
    expect(await findWallet(stack.db, 'rc-concurrent-user')).toEqual({ userId: 'rc-concurrent-user', balance: 100 });
  });

  it.each([
    ['a wrong Authorization value', 'Bearer not-the-secret'],
    ['a missing Authorization header', null],
    ['the secret without its Bearer prefix', 'rc_test_webhook_auth'],
  ])('answers 401 and stores nothing for %s', async (_case, authorization) => {
    const eventId = `rc-unauthorized-${String(authorization)}`;
    const response = await stack.postRevenueCat(revenueCatTokenPurchase({ id: eventId }), authorization);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect(await rowsFor(eventId)).toHaveLength(0);
  });

  it('accepts the previous Authorization value during a rotation', async () => {
    const eventId = 'rc-rotation-old-auth';
    const response = await stack.postRevenueCat(
      revenueCatTokenPurchase({ id: eventId }),
      'Bearer rc_test_previous_auth',
    );
    expect(response.status).toBe(200);
    expect(await rowsFor(eventId)).toHaveLength(1);
  });

  it('accepts every published RevenueCat sample body, storing each distinct event id once', async () => {
    const files = readdirSync(fixtures).filter((name) => name.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(20);
    const ids = new Set<string>();
    for (const file of files) {
      const body = readFileSync(path.join(fixtures, file), 'utf8');
      const id = JSON.parse(body).event.id as string;
      const response = await stack.postRevenueCat(body);
      expect({ file, status: response.status }).toEqual({ file, status: 200 });
      const answer = await response.json();
      expect(answer).toEqual({ status: ids.has(id) ? 'duplicate' : 'accepted', eventId: id });
      ids.add(id);
    }
    for (const id of ids) expect(await rowsFor(id)).toHaveLength(1);
    // The samples' first NON_RENEWING_PURCHASE (2100_tokens for user 1234567890) credits once or,
    // if an earlier sample already used its id, is recorded as a duplicate: either way the
    // ledger stays consistent.
    await eventually('every sample to finish', async () => {
      const pending = await stack.db
        .selectFrom('inbox_events')
        .select('id')
        .where('status', 'in', ['received', 'processing'])
        .execute();
      return pending.length === 0;
    });
    expect((await verifyLedger(stack.db)).ok).toBe(true);
  });

  it.each([
    ['a body that is not JSON', 'application/json', '{"event": ', 400, 'invalid_event'],
    ['an event without id', 'application/json', JSON.stringify({ event: { type: 'TEST' } }), 400, 'invalid_event'],
    ['a body without event', 'application/json', JSON.stringify({ api_version: '1.0' }), 400, 'invalid_event'],
    ['a form-encoded body', 'application/x-www-form-urlencoded', 'a=b', 415, 'unsupported_media_type'],
    ['a text body', 'text/plain', '{}', 415, 'unsupported_media_type'],
  ])('rejects %s without storing it', async (_case, contentType, body, status, code) => {
    const before = await stack.db
      .selectFrom('inbox_events')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const response = await stack.postRevenueCat(body, undefined, contentType);
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ error: { code, message: expect.any(String) } });
    const after = await stack.db
      .selectFrom('inbox_events')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('answers 413 for a body over the limit', async () => {
    const big = JSON.stringify({
      api_version: '1.0',
      event: { id: 'rc-big', type: 'TEST', padding: 'x'.repeat(70 * 1024) },
    });
    const response = await stack.postRevenueCat(big);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
    expect(await rowsFor('rc-big')).toHaveLength(0);
  });

  it('records TEST and unknown event types and ignores them', async () => {
    for (const [id, type] of [
      ['rc-test-event', 'TEST'],
      ['rc-future-type', 'SOMETHING_NEW_FROM_REVENUECAT'],
    ]) {
      const body = JSON.stringify({ api_version: '1.0', event: { id, type, app_user_id: 'ignored-user' } });
      expect((await stack.postRevenueCat(body)).status).toBe(200);
    }
    const rows = await eventually('both events to be ignored', async () => {
      const found = await stack.db
        .selectFrom('inbox_events')
        .select(['provider_event_id', 'status', 'outcome_code', 'outcome_detail'])
        .where('provider_event_id', 'in', ['rc-test-event', 'rc-future-type'])
        .orderBy('provider_event_id')
        .execute();
      return found.length === 2 && found.every((row) => row.status === 'ignored') ? found : undefined;
    });
    expect(rows).toEqual([
      {
        provider_event_id: 'rc-future-type',
        status: 'ignored',
        outcome_code: 'unhandled_type',
        outcome_detail: 'event type SOMETHING_NEW_FROM_REVENUECAT is not handled',
      },
      {
        provider_event_id: 'rc-test-event',
        status: 'ignored',
        outcome_code: 'test_event',
        outcome_detail: 'test event',
      },
    ]);
    expect(await findWallet(stack.db, 'ignored-user')).toEqual({ userId: 'ignored-user', balance: 0 });
  });
});
