import { postLedgerEntry } from '@tally/billing-core';
import { sql } from 'kysely';
import { auditOf } from '../../support/audit';
import { runCli } from '../../support/built-process';
import { ledgerOf, lotsOf } from '../../support/ledger';
import { basicAuth } from '../../support/parked-events';
import { adminKey, type Json, readJson } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';
import { suiteStackWithFakeStripe } from '../../support/suite';

/**
 * Grants (docs/lots.md "Grants"), over HTTP against real Postgres: the app's grant fenced by its
 * reference, support's grant and void through the admin API and the console, each audited.
 */
describe('grants of promotional tokens and voids of lots', () => {
  const { stack } = suiteStackWithFakeStripe({ worker: { concurrency: 2 } });

  const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
  const grant = (userId: string, body: Json, headers: Record<string, string> = {}) =>
    stack.apiRequest(`/v1/users/${userId}/grants`, { method: 'POST', body, headers });
  const answer = async (response: Response) => ({ status: response.status, body: await readJson(response) });
  const lotRows = (userId: string) => lotsOf(stack.db, userId);
  const entries = (userId: string) => ledgerOf(stack.db, userId, ['reference', 'amount', 'balance_after', 'reason']);
  const balance = async (userId: string) =>
    (await stack.db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst())
      ?.balance ?? 0;
  const auditRows = (action: string) => auditOf(stack.db, { action });

  it('a grant retried with its reference grants once (with or without an Idempotency-Key), another amount or expiry is 409 reference_conflict, and bad bodies are 400', async () => {
    const userId = stripeId('user');
    const expiresAt = inAnHour();
    const first = await answer(await grant(userId, { amount: 50, reference: 'referral:abc', expiresAt }));
    const lots = await lotRows(userId);
    expect(first).toEqual({
      status: 201,
      body: {
        ledgerReference: 'grant:referral:abc',
        lotId: lots[0]?.id,
        amount: 50,
        expiresAt,
        balance: 50,
        debtSettled: 0,
      },
    });
    expect(await answer(await grant(userId, { amount: 50, reference: 'referral:abc', expiresAt }))).toEqual({
      status: 200,
      body: first.body,
    });
    const keyed = await grant(
      userId,
      { amount: 50, reference: 'referral:abc', expiresAt },
      { 'Idempotency-Key': 'k1' },
    );
    expect(await answer(keyed)).toEqual({ status: 200, body: first.body });
    for (const other of [
      { amount: 51, reference: 'referral:abc', expiresAt },
      { amount: 50, reference: 'referral:abc', expiresAt: inAnHour().replace(/:\d\d\./, ':59.') },
      { amount: 50, reference: 'referral:abc' },
    ]) {
      const conflict = await answer(await grant(userId, other));
      expect({ status: conflict.status, code: conflict.body.error?.code }).toEqual({
        status: 409,
        code: 'reference_conflict',
      });
    }
    for (const bad of [
      { amount: 0, reference: 'r1' },
      { amount: 1.5, reference: 'r1' },
      { amount: 1_000_000_001, reference: 'r1' },
      { amount: 5, reference: '' },
      { amount: 5, reference: 'has space' },
      { amount: 5, reference: 'x'.repeat(201) },
      { amount: 5, reference: 'r1', expiresAt: new Date(Date.now() - 1000).toISOString() },
      { amount: 5, reference: 'r1', expiresAt: 'tomorrow' },
    ]) {
      const refused = await answer(await grant(userId, bad));
      expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
        status: 400,
        code: 'invalid_request',
      });
    }
    expect(await lotRows(userId)).toEqual([
      {
        id: first.body.lotId,
        category: 'promotional',
        source: 'grant:referral:abc',
        amount: 50,
        remaining: 50,
        expires_at: new Date(expiresAt),
      },
    ]);
    expect(await entries(userId)).toEqual([
      { reference: 'grant:referral:abc', amount: 50, balance_after: 50, reason: 'grant' },
    ]);
    expect(await balance(userId)).toBe(50);
  });

  it('two concurrent grants with one reference grant once', async () => {
    const userId = stripeId('user');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => grant(userId, { amount: 7, reference: 'daily:2026-12-02' }).then(answer)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(await entries(userId)).toEqual([
      { reference: 'grant:daily:2026-12-02', amount: 7, balance_after: 7, reason: 'grant' },
    ]);
    expect((await lotRows(userId)).map((lot) => lot.remaining)).toEqual([7]);
  });

  it('an expiring grant is spent before a pack: a studio debit draws it first', async () => {
    const userId = stripeId('user');
    const pack = stripeEventBody(
      'payment_intent.succeeded',
      stripePackIntent({ id: stripeId('pi'), userId, customer: stripeId('cus') }),
    );
    expect(await stack.finishedInboxRow('stripe', await stack.deliverStripe(pack))).toMatchObject({
      outcome_code: 'credited',
    });
    const granted = await answer(await grant(userId, { amount: 20, reference: 'reward:1', expiresAt: inAnHour() }));
    expect(granted.status).toBe(201);
    const spend = async () => {
      const response = await stack.apiRequest(`/v1/users/${userId}/studio/requests`, {
        method: 'POST',
        body: { kind: 'music', full: true, input: { prompt: 'grants' } },
      });
      expect(response.status).toBe(202);
      return (await readJson(response)).id as string;
    };
    await spend(); // the free allowance
    await spend();
    const paid = await spend();
    const draws = await sql<{ reference: string; lot_id: number; amount: number }>`
      SELECT e.reference, d.lot_id, d.amount FROM ledger_draws d JOIN ledger_entries e ON e.id = d.ledger_entry_id
       WHERE e.user_id = ${userId} ORDER BY d.ledger_entry_id, d.lot_id`.execute(stack.db);
    expect(draws.rows).toEqual([{ reference: `studio:${paid}:debit`, lot_id: granted.body.lotId, amount: 15 }]);
    const lots = await lotRows(userId);
    expect(lots.map((lot) => [lot.category, lot.remaining])).toEqual([
      ['purchased', 100],
      ['promotional', 5],
    ]);
  });

  it('support grants and voids through the admin API, each audited in its transaction; a void takes only what is left, again only what came back, never from another user', async () => {
    const userId = stripeId('user');
    const admin = (path: string, body?: Json) =>
      stack.apiRequest(path, { method: 'POST', ...(body === undefined ? {} : { body }) }).then(answer);
    const granted = await admin(`/admin/users/${userId}/grants`, {
      amount: 30,
      reference: 'goodwill-1',
      note: 'ticket 9',
    });
    expect(granted).toEqual({
      status: 201,
      body: expect.objectContaining({
        ledgerReference: 'admin:grant:goodwill-1',
        amount: 30,
        expiresAt: null,
        balance: 30,
      }),
    });
    const generated = await admin(`/admin/users/${userId}/grants`, { amount: 5 });
    expect(generated.body.ledgerReference).toMatch(/^admin:grant:support-/);
    expect((await admin(`/admin/users/${userId}/grants`, { amount: 31, reference: 'goodwill-1' })).status).toBe(409);
    // Spend 10 of the lot first (the oldest of the two never-expiring promotional lots): the void takes the 20 left.
    await stack.transaction((uow) =>
      postLedgerEntry(uow, {
        userId,
        reference: `test:spend:${userId}`,
        amount: -10,
        reason: 'test',
        lots: { kind: 'spend' },
      }),
    );
    const other = stripeId('user');
    const otherLot = (await admin(`/admin/users/${other}/grants`, { amount: 3 })).body.lotId;
    expect((await admin(`/admin/users/${userId}/lots/${otherLot}/void`)).status).toBe(404);
    const voided = await admin(`/admin/users/${userId}/lots/${granted.body.lotId}/void`);
    expect(voided).toEqual({
      status: 200,
      body: {
        lotId: granted.body.lotId,
        ledgerReference: `lot:${granted.body.lotId}:voided`,
        taken: 20,
        balance: 5,
        alreadyVoided: false,
      },
    });
    // A void is a standing state: voiding again takes what is unheld now (nothing here).
    expect(await admin(`/admin/users/${userId}/lots/${granted.body.lotId}/void`)).toEqual({
      status: 200,
      body: { ...voided.body, taken: 0, alreadyVoided: true },
    });
    expect((await lotRows(userId)).map((lot) => [lot.source, lot.remaining])).toEqual([
      ['admin:grant:goodwill-1', 0],
      [generated.body.ledgerReference, 5],
    ]);
    expect(await entries(userId)).toEqual([
      { reference: 'admin:grant:goodwill-1', amount: 30, balance_after: 30, reason: 'admin_grant' },
      { reference: generated.body.ledgerReference, amount: 5, balance_after: 35, reason: 'admin_grant' },
      { reference: `test:spend:${userId}`, amount: -10, balance_after: 25, reason: 'test' },
      { reference: `lot:${granted.body.lotId}:voided`, amount: -20, balance_after: 5, reason: 'lot_voided' },
    ]);
    expect(await balance(other)).toBe(3);
    expect((await auditRows('user.grant')).filter((row) => row.target_id === userId)).toEqual([
      { action: 'user.grant', surface: 'api', target_kind: 'user', target_id: userId, status_code: 201, outcome: 'ok' },
      { action: 'user.grant', surface: 'api', target_kind: 'user', target_id: userId, status_code: 201, outcome: 'ok' },
      {
        action: 'user.grant',
        surface: 'api',
        target_kind: 'user',
        target_id: userId,
        status_code: 409,
        outcome: 'reference_conflict',
      },
    ]);
    const voids = (await auditRows('lot.void')).filter((row) =>
      [String(granted.body.lotId), String(otherLot)].includes(row.target_id ?? ''),
    );
    expect(voids.map((row) => [row.target_id, row.status_code, row.outcome])).toEqual([
      [String(otherLot), 404, 'not_found'],
      [String(granted.body.lotId), 200, 'ok'],
      [String(granted.body.lotId), 200, 'ok'],
    ]);
  });

  it('a void never takes the balance below zero: with a balance below the lot (an entry old code posted without lots), it takes the balance', async () => {
    const userId = stripeId('user');
    const granted = await readJson(
      await stack.apiRequest(`/admin/users/${userId}/grants`, {
        method: 'POST',
        body: { amount: 30, reference: 'low' },
      }),
    );
    // Old code's debit: an entry without lots (the wallet moves, the lot does not).
    await sql`INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
      VALUES (${userId}, ${`test:old:${userId}`}, -25, 30, 5, 'test_old_debit')`.execute(stack.db);
    const voided = await stack.apiRequest(`/admin/users/${userId}/lots/${granted.lotId}/void`, { method: 'POST' });
    expect({ status: voided.status, body: await readJson(voided) }).toEqual({
      status: 200,
      body: {
        lotId: granted.lotId,
        ledgerReference: `lot:${granted.lotId}:voided`,
        taken: 5,
        balance: 0,
        alreadyVoided: false,
      },
    });
    expect(await balance(userId)).toBe(0);
    expect((await lotRows(userId)).map((lot) => lot.remaining)).toEqual([0]);
    expect((await entries(userId)).map((entry) => [entry.reference, entry.amount, entry.balance_after])).toEqual([
      ['admin:grant:low', 30, 30],
      [`test:old:${userId}`, -25, 5],
      [`lot:${granted.lotId}:voided`, -5, 0],
    ]);
  });

  it('the console user page lists the lots, grants through its form and voids with a lot button (same-origin POSTs, audited)', async () => {
    const userId = stripeId('user');
    const consoleUrl = `http://127.0.0.1:${stack.api.port}/admin/console`;
    const headers = {
      authorization: basicAuth('support', adminKey),
      origin: `http://127.0.0.1:${stack.api.port}`,
      'sec-fetch-site': 'same-origin',
    };
    const pageOf = async () => {
      const response = await fetch(`${consoleUrl}/users/${userId}`, {
        headers: { authorization: headers.authorization },
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    await grant(userId, { amount: 12, reference: 'seed' });
    const before = await pageOf();
    expect(before).toContain('grant:seed');
    const reference = /name="reference" value="([^"]+)"/.exec(before)?.[1];
    expect(reference).toMatch(/^console-/);
    const form = new URLSearchParams({ reference: reference ?? '', amount: '40', expiresAt: '', note: 'apology' });
    const post = (path: string, body?: string) =>
      fetch(`${consoleUrl}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        redirect: 'manual',
        ...(body === undefined ? {} : { body }),
      });
    const posted = await post(`/users/${userId}/grants`, form.toString());
    expect({ status: posted.status, location: posted.headers.get('location') }).toEqual({
      status: 303,
      location: `/admin/console/users/${userId}?notice=granted#lots`,
    });
    // The same form submitted twice grants once.
    expect((await post(`/users/${userId}/grants`, form.toString())).headers.get('location')).toContain(
      'notice=already_granted',
    );
    const lots = await lotRows(userId);
    expect(lots.map((lot) => [lot.source, lot.remaining])).toEqual([
      ['grant:seed', 12],
      [`admin:grant:${reference}`, 40],
    ]);
    expect(await pageOf()).toContain(`action="/admin/console/users/${userId}/lots/${lots[1]?.id}/void"`);
    const voided = await post(`/users/${userId}/lots/${lots[1]?.id}/void`);
    expect(voided.headers.get('location')).toBe(`/admin/console/users/${userId}?notice=voided#lots`);
    const cross = await fetch(`${consoleUrl}/users/${userId}/lots/${lots[0]?.id}/void`, {
      method: 'POST',
      headers: { authorization: headers.authorization, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      redirect: 'manual',
    });
    expect(cross.status).toBe(403);
    expect((await lotRows(userId)).map((lot) => lot.remaining)).toEqual([12, 0]);
    expect(await balance(userId)).toBe(12);
    expect(
      (await auditRows('user.grant')).filter((row) => row.target_id === userId && row.surface === 'console'),
    ).toEqual([
      expect.objectContaining({ status_code: 303, outcome: 'ok' }),
      expect.objectContaining({ status_code: 303, outcome: 'ok' }),
    ]);
    expect(
      (await auditRows('lot.void')).filter((row) => row.target_id === String(lots[1]?.id) && row.surface === 'console'),
    ).toEqual([expect.objectContaining({ status_code: 303, outcome: 'ok' })]);
  });
});

describe('tally grant and tally user (the CLI, against the database)', () => {
  const { stack } = suiteStackWithFakeStripe();

  it('grants once per reference with its audit row in the same transaction, refuses another amount, and tally user lists the lots', async () => {
    const env = { DATABASE_URL: stack.database.url };
    const userId = stripeId('user');
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const args = ['grant', userId, '25', '--reference', 'ticket-77', '--expires-at', expiresAt, '--note', 'sorry'];
    const first = await runCli([...args, '--json'], env);
    expect(first.code).toBe(0);
    const answer = JSON.parse(first.stdout);
    expect(answer).toEqual({
      ledgerReference: 'admin:grant:ticket-77',
      lotId: expect.any(Number),
      amount: 25,
      expiresAt,
      balance: 25,
      debtSettled: 0,
      alreadyGranted: false,
    });
    const again = await runCli([...args, '--json'], env);
    expect(JSON.parse(again.stdout)).toEqual({ ...answer, alreadyGranted: true });
    const conflict = await runCli(['grant', userId, '26', '--reference', 'ticket-77', '--expires-at', expiresAt], env);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('already granted another amount');
    expect((await runCli(['grant', userId, '0'], env)).code).toBe(2);
    const ledger = await stack.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'reason'])
      .where('user_id', '=', userId)
      .execute();
    expect(ledger).toEqual([{ reference: 'admin:grant:ticket-77', amount: 25, reason: 'admin_grant' }]);
    const audit = await auditOf(stack.db, { targetIds: [userId] }, ['action', 'surface', 'target_id', 'outcome']);
    expect(audit).toEqual([
      { action: 'user.grant', surface: 'cli', target_id: userId, outcome: 'ok' },
      { action: 'user.grant', surface: 'cli', target_id: userId, outcome: 'ok' },
      { action: 'user.grant', surface: 'cli', target_id: userId, outcome: 'reference_conflict' },
    ]);
    const user = await runCli(['user', userId], env);
    expect(user.code).toBe(0);
    expect(user.stdout).toMatch(
      new RegExp(
        `${answer.lotId}\\s+promotional\\s+admin:grant:ticket-77\\s+25\\s+25\\s+${expiresAt.replace(/\./g, '\\.')}`,
      ),
    );
  });
});
