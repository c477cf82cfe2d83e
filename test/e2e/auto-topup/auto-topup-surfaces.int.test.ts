import { queueCatalog } from '@tally/billing-core';
import { auditOf } from '../../support/audit';
import { attemptsOf, debit, fund, messagesOf, saveCard, setAutoTopup } from '../../support/auto-topup';
import { runCli } from '../../support/built-process';
import { basicAuth } from '../../support/parked-events';
import { answerOf } from '../../support/requests';
import { adminKey, eventually, type Json } from '../../support/stack';
import { suiteStackWithFakeStripe } from '../../support/suite';

jest.setTimeout(120_000);

/**
 * Support's surfaces of auto top-up (issue 59): the admin API's GET and audited disable, the
 * console's section on the user page with its Disable button (audited, the app told and the
 * message handed off after the commit), and `tally autotopup` (audited, surface cli; its message
 * left to the relay). Real Postgres, Redis, api, ingest and a worker charging through a fake Stripe.
 */
describe('auto top-up on the admin API, the console and the CLI', () => {
  const { stack, fake } = suiteStackWithFakeStripe({
    // The api hands its messages to the queue after commit (as with APP_WEBHOOK_URL set); no relay
    // runs, so a message the CLI writes stays unqueued.
    appWebhookHandOff: true,
    worker: {
      roles: ['inbox', 'auto-topup'],
      autoTopup: { intervalMs: 50, leaseMs: 3_000, backoff: { baseDelayMs: 100, maxDelayMs: 300 } },
    },
  });
  let seq = 0;
  const newUser = () => `autotopup-ops-${++seq}-${Date.now().toString(36)}`;
  const finished = (userId: string, count: number) =>
    eventually(`${count} finished attempt(s) of ${userId}`, async () => {
      const attempts = await attemptsOf(stack, userId);
      const done = attempts.filter((a) => a.status === 'succeeded' || a.status === 'failed');
      return done.length >= count && attempts.length === done.length ? attempts : undefined;
    });
  /**
   * A user whose auto top-up charged once (succeeded) and then was declined once: two attempts,
   * one failure in a row, one charge this month, still enabled.
   */
  const userWithAttempts = async () => {
    const userId = newUser();
    const paymentMethodId = await saveCard(stack, fake, userId);
    await setAutoTopup(stack, userId, { threshold: 50, monthlyLimit: 4 });
    await fund(stack, userId, 100);
    expect(await debit(stack, userId, 60, 'dip-1')).toBe(201);
    await finished(userId, 1);
    fake.setCardBehaviour(paymentMethodId, 'declines');
    expect(await debit(stack, userId, 95, 'dip-2')).toBe(201);
    const attempts = await finished(userId, 2);
    expect(attempts.map((a) => [a.status, a.failure_code])).toEqual([
      ['succeeded', null],
      ['failed', 'insufficient_funds'],
    ]);
    const customerId = fake.offSessionCharges.find((charge) => charge.paymentMethod === paymentMethodId)?.customer;
    return { userId, paymentMethodId, customerId, attempts };
  };
  const adminGet = (userId: string) => stack.apiRequest(`/admin/users/${userId}/auto-topup`).then(answerOf);
  const settingsOf = (userId: string) =>
    stack.db
      .selectFrom('auto_topup_settings')
      .select(['enabled', 'disabled_reason', 'failures_in_a_row'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
  const disabledMessages = (userId: string) =>
    stack.db
      .selectFrom('app_webhook_messages')
      .select(['id', 'data', 'enqueued_at'])
      .where('user_id', '=', userId)
      .where('type', '=', 'wallet.auto_topup_disabled')
      .orderBy('id')
      .execute();
  const queuedJob = (messageId: number) =>
    stack.appWebhookQueue.getJob(queueCatalog.appWebhooks.jobId({ appWebhookMessageId: messageId }));

  it("support reads a user's settings and attempts on the admin API and turns it off (audited); no note is a 400", async () => {
    const { userId, paymentMethodId, customerId, attempts } = await userWithAttempts();
    const read = await adminGet(userId);
    expect(read).toEqual({
      status: 200,
      body: {
        autoTopup: expect.objectContaining({
          userId,
          enabled: true,
          packId: 'tokens_100',
          threshold: 50,
          monthlyLimit: 4,
          disabledReason: null,
          failuresInARow: 1,
          paymentMethod: { id: paymentMethodId, customerId, savedAt: expect.any(String) },
          thisMonth: 1,
          inFlight: null,
        }),
        attempts: [
          expect.objectContaining({ id: attempts[1]?.id, status: 'failed', failureCode: 'insufficient_funds' }),
          expect.objectContaining({ id: attempts[0]?.id, status: 'succeeded', failureCode: null }),
        ],
      },
    });
    const disable = (body: Json) =>
      stack.apiRequest(`/admin/users/${userId}/auto-topup/disable`, { method: 'POST', body }).then(answerOf);
    expect(await disable({})).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect((await settingsOf(userId)).enabled).toBe(true);
    expect(await disable({ note: 'ticket 59' })).toEqual({ status: 200, body: { userId, disabled: true } });
    expect(await disable({ note: 'again' })).toEqual({ status: 200, body: { userId, disabled: false } });
    expect(await settingsOf(userId)).toEqual({ enabled: false, disabled_reason: 'operator', failures_in_a_row: 1 });
    const [message, ...more] = await disabledMessages(userId);
    expect(more).toEqual([]);
    expect(message?.data).toEqual({ userId, reason: 'operator', failuresInARow: 1 });
    expect(await queuedJob(Number(message?.id))).toBeDefined();
    expect(await auditOf(stack.db, { targetIds: [userId] })).toEqual([
      expect.objectContaining({ action: 'auto_topup.disable', surface: 'api', status_code: 400 }),
      expect.objectContaining({ action: 'auto_topup.disable', surface: 'api', status_code: 200, outcome: 'ok' }),
      expect.objectContaining({ action: 'auto_topup.disable', surface: 'api', status_code: 200, outcome: 'ok' }),
    ]);
  });

  it('the console shows the settings and the attempts on the user page; its button turns it off (same-origin POST, a note required, audited, the app told)', async () => {
    const { userId, paymentMethodId, customerId, attempts } = await userWithAttempts();
    const [succeeded, declined] = attempts;
    const base = `http://127.0.0.1:${stack.api.port}/admin/console`;
    const pageOf = async () => {
      const response = await fetch(`${base}/users/${userId}`, { headers: { authorization: basicAuth('s', adminKey) } });
      expect(response.status).toBe(200);
      const text = await response.text();
      const start = text.indexOf('<h2 id="auto-topup">');
      expect(start).toBeGreaterThan(0);
      return text.slice(start, text.indexOf('<h2', start + 1));
    };
    const section = await pageOf();
    expect(section).toContain('<dd id="auto-topup-state"><span class="good">enabled</span></dd>');
    expect(section).toContain('<dt>Pack</dt><dd>tokens_100</dd>');
    expect(section).toContain('<dt>Threshold</dt><dd>50</dd>');
    expect(section).toContain('<dt>This month</dt><dd>1 of 4 (in flight or succeeded)</dd>');
    expect(section).toContain('<dt>Failures in a row</dt><dd class="bad">1</dd>');
    expect(section).toContain(
      `<span class="mono">${paymentMethodId}</span> of customer <span class="mono">${customerId}</span>`,
    );
    // The attempts, newest first: the decline with its code and payment intent, then the charge.
    const rows = [
      ...section.matchAll(/<tr><td><span class="mono">([^<]+)<\/span><\/td><td><span class="status-(\w+)">/g),
    ];
    expect(rows.map((row) => [row[1], row[2]])).toEqual([
      [declined?.id, 'failed'],
      [succeeded?.id, 'succeeded'],
    ]);
    expect(section).toContain('<td>45 / 50</td>');
    expect(section).toContain('<td>40 / 50</td>');
    expect(section).toContain('<td>insufficient_funds</td>');
    expect(section).toContain(`<span class="mono">${declined?.payment_intent_id}</span>`);
    expect(section).toContain(`<span class="mono">${succeeded?.payment_intent_id}</span>`);
    expect(section).toContain(`action="/admin/console/users/${userId}/auto-topup/disable"`);
    expect(section).toContain('<input id="at-note" name="note" required maxlength="1000">');

    const sameOrigin = { origin: `http://127.0.0.1:${stack.api.port}`, 'sec-fetch-site': 'same-origin' };
    const submit = (form: string, from: Record<string, string> = sameOrigin) =>
      fetch(`${base}/users/${userId}/auto-topup/disable`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          authorization: basicAuth('s', adminKey),
          ...from,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form,
      });
    const location = async (form: string) => (await submit(form)).headers.get('location');
    const back = `/admin/console/users/${userId}`;
    expect(await location('note=+')).toBe(`${back}?notice=invalid_auto_topup_disable#auto-topup`);
    expect((await submit('note=x', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(
      403,
    );
    expect((await settingsOf(userId)).enabled).toBe(true);
    expect(await disabledMessages(userId)).toEqual([]);

    const done = await submit('note=card+reported+stolen');
    expect({ status: done.status, location: done.headers.get('location') }).toEqual({
      status: 303,
      location: `${back}?notice=auto_topup_disabled#auto-topup`,
    });
    expect(await settingsOf(userId)).toEqual({ enabled: false, disabled_reason: 'operator', failures_in_a_row: 1 });
    const [message] = await disabledMessages(userId);
    expect(message?.data).toEqual({ userId, reason: 'operator', failuresInARow: 1 });
    // Handed to the app-webhooks queue after the commit, as the admin route does.
    expect(message?.enqueued_at).not.toBeNull();
    expect(await queuedJob(Number(message?.id))).toBeDefined();
    expect(await location('note=again')).toBe(`${back}?notice=auto_topup_already_off#auto-topup`);
    expect(await disabledMessages(userId)).toHaveLength(1);

    const after = await pageOf();
    expect(after).toContain('<dd id="auto-topup-state"><span class="bad">disabled</span> (reason operator)</dd>');
    expect(after).not.toContain('/auto-topup/disable');
    expect(
      (
        await auditOf(stack.db, { targetIds: [userId] }, ['action', 'surface', 'status_code', 'outcome', 'request'])
      ).map((row) => [row.action, row.surface, row.status_code, row.outcome, (row.request as { body: Json }).body]),
    ).toEqual([
      ['auto_topup.disable', 'console', 303, 'invalid_request', { note: ' ' }],
      ['auto_topup.disable', 'console', 303, 'ok', { note: 'card reported stolen' }],
      ['auto_topup.disable', 'console', 303, 'ok', { note: 'again' }],
    ]);
  });

  it('tally autotopup shows the settings and the attempts, and --disable --note turns it off (audited, surface cli; the message left to the relay)', async () => {
    const env = { DATABASE_URL: stack.database.url };
    const { userId, attempts } = await userWithAttempts();
    const shown = await runCli(['autotopup', userId, '--json'], env);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(shown.stdout)).toEqual((await adminGet(userId)).body);

    const text = await runCli(['autotopup', userId], env);
    const lines = text.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      `auto top-up of ${userId}: enabled`,
      '  pack tokens_100, threshold 50, this month 1 of 4, failures in a row 1',
      expect.stringMatching(/^ {2}card pm_\S+ of customer cus_\S+, saved \d{4}-/),
    ]);
    expect(lines[4]).toMatch(
      /^ATTEMPT\s+STATUS\s+AVAILABLE AFTER \/ THRESHOLD\s+PAYMENT INTENT\s+FAILURE CODE\s+REQUIRES ACTION/,
    );
    expect(lines[5]).toMatch(
      new RegExp(`^${attempts[1]?.id}\\s+failed\\s+45 / 50\\s+pi_\\S+\\s+insufficient_funds\\s+no\\s+1\\s`),
    );
    expect(lines[6]).toMatch(new RegExp(`^${attempts[0]?.id}\\s+succeeded\\s+40 / 50\\s+pi_\\S+\\s+-\\s+no\\s`));

    // No disable without a note: a usage error, nothing changed, nothing audited.
    const noNote = await runCli(['autotopup', userId, '--disable'], env);
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('--disable needs --note');
    expect((await settingsOf(userId)).enabled).toBe(true);

    const disabled = await runCli(['autotopup', userId, '--disable', '--note', 'ticket 60', '--json'], env);
    expect({ code: disabled.code, stderr: disabled.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(disabled.stdout)).toMatchObject({
      disabled: true,
      autoTopup: { userId, enabled: false, disabledReason: 'operator', failuresInARow: 1 },
      attempts: [{ id: attempts[1]?.id }, { id: attempts[0]?.id }],
    });
    const again = await runCli(['autotopup', userId, '--disable', '--note', 'again'], env);
    expect(again.stdout.split('\n')[0]).toBe('auto top-up was already off; nothing changed');
    expect(await settingsOf(userId)).toEqual({ enabled: false, disabled_reason: 'operator', failures_in_a_row: 1 });
    expect(await messagesOf(stack, userId, 'wallet.auto_topup_disabled')).toEqual([
      { userId, reason: 'operator', failuresInARow: 1 },
    ]);
    // Written in the command's transaction, for the relay to hand off (the CLI holds no queue).
    expect((await disabledMessages(userId)).map((row) => row.enqueued_at)).toEqual([null]);
    expect(
      (await auditOf(stack.db, { targetIds: [userId] }, ['action', 'surface', 'outcome', 'request', 'answer'])).map(
        (row) => [row.action, row.surface, row.outcome, (row.request as { body: Json }).body, row.answer],
      ),
    ).toEqual([
      ['auto_topup.disable', 'cli', 'ok', { note: 'ticket 60' }, { userId, disabled: true }],
      ['auto_topup.disable', 'cli', 'ok', { note: 'again' }, { userId, disabled: false }],
    ]);
  });
});
