import { linkUserIds } from '@tally/billing-core';
import { sql } from 'kysely';
import { auditOf } from '../../support/audit';
import { runCli } from '../../support/built-process';
import { grantOverApi, postAnswer, untilDatabaseClockPast } from '../../support/requests';
import { type Json, readJson } from '../../support/stack';
import { stripeId } from '../../support/stripe-events';
import { suiteStack, verifyLedgerAfterEach } from '../../support/suite';

// The CLI test starts several CLI processes (about 1 s each on an idle machine, far more under load).
jest.setTimeout(180_000);

/**
 * Holds for support and operators (docs/holds.md "Support"), over HTTP against real Postgres:
 * the admin release (audited in its own transaction, answering like the app's release), the
 * support view's held, available and holds, and the CLI's `tally user` and `tally hold release`.
 * The console's Release button is tested in console.int.test.ts.
 */
describe('holds in the support view, the admin API and the CLI', () => {
  const stack = suiteStack();
  verifyLedgerAfterEach(stack);

  const post = (path: string, body: Json = {}) => postAnswer(stack, path, body);
  const grant = (userId: string, amount: number) => grantOverApi(stack, userId, amount);
  const hold = async (userId: string, amount: number, reference: string, expiresInSeconds = 600) => {
    const placed = await post(`/v1/users/${userId}/holds`, { amount, reference, expiresInSeconds });
    expect(placed.status).toBe(201);
    return placed.body.id as string;
  };
  const adminRelease = (userId: string, holdId: string) => post(`/admin/users/${userId}/holds/${holdId}/release`);
  const auditOfHolds = (holdIds: string[]) => auditOf(stack.db, { targetIds: holdIds });
  const holdRow = (holdId: string) =>
    stack.db.selectFrom('holds').select(['status', 'released']).where('id', '=', holdId).executeTakeFirstOrThrow();
  const untilPast = (expiresAt: string) => untilDatabaseClockPast(stack.db, expiresAt);

  it("support's release answers like the app's (a repeat answers the first release, captured is 409 hold_not_active, another user's hold 404), audited as hold.release", async () => {
    const userId = stripeId('user');
    await grant(userId, 100);
    const a = await hold(userId, 30, 'job-a');
    const b = await hold(userId, 20, 'job-b');
    const c = await hold(userId, 10, 'job-c');
    expect((await post(`/v1/users/${userId}/holds/${c}/capture`)).status).toBe(200);
    const other = stripeId('user');
    await grant(other, 5);
    const otherHold = await hold(other, 5, 'job-x');

    const released = await adminRelease(userId, a);
    // Balance 90 after the capture of c; b still holds 20.
    expect(released).toEqual({ status: 200, body: { id: a, status: 'released', available: 70 } });
    expect(await adminRelease(userId, a)).toEqual(released);
    // The app's release of the same hold answers the same: one answer per hold, whoever released it.
    expect(await post(`/v1/users/${userId}/holds/${a}/release`)).toEqual(released);
    expect(await adminRelease(userId, c)).toEqual({
      status: 409,
      body: { error: { code: 'hold_not_active', message: `hold ${c} is captured` } },
    });
    expect((await adminRelease(userId, otherHold)).status).toBe(404);
    expect((await adminRelease(userId, 'hold_nope')).body.error.code).toBe('invalid_request');
    expect(await holdRow(a)).toEqual({ status: 'released', released: 30 });
    expect(await holdRow(b)).toEqual({ status: 'held', released: null });
    expect(await holdRow(otherHold)).toEqual({ status: 'held', released: null });
    expect(await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))).toMatchObject({
      balance: 90,
      held: 20,
      available: 70,
    });
    // No ledger row for a release.
    expect(
      (await stack.db.selectFrom('ledger_entries').select('reference').where('user_id', '=', userId).execute()).map(
        (row) => row.reference,
      ),
    ).toEqual([expect.stringMatching(/^grant:/), `hold:${c}:capture`]);
    expect(await auditOfHolds([a, c, otherHold])).toEqual([
      { action: 'hold.release', surface: 'api', target_kind: 'hold', target_id: a, status_code: 200, outcome: 'ok' },
      { action: 'hold.release', surface: 'api', target_kind: 'hold', target_id: a, status_code: 200, outcome: 'ok' },
      {
        action: 'hold.release',
        surface: 'api',
        target_kind: 'hold',
        target_id: c,
        status_code: 409,
        outcome: 'hold_not_active',
      },
      {
        action: 'hold.release',
        surface: 'api',
        target_kind: 'hold',
        target_id: otherHold,
        status_code: 404,
        outcome: 'not_found',
      },
    ]);
  });

  it('releases by a linked id, and commits the release with its audit row: when the row cannot be written, the hold stays held', async () => {
    const userId = stripeId('user');
    const alias = `$RCAnonymousID:${stripeId('anon')}`;
    await stack.transaction((uow) => linkUserIds(uow, [userId, alias]));
    await grant(userId, 50);
    const holdId = await hold(userId, 40, 'job-linked');
    await sql`CREATE TABLE test_hold_audit_refused (target_id text PRIMARY KEY)`.execute(stack.db);
    await sql`CREATE FUNCTION test_refuse_hold_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM test_hold_audit_refused WHERE target_id = NEW.target_id) THEN
          RAISE EXCEPTION 'audit row refused for %', NEW.target_id;
        END IF;
        RETURN NEW;
      END $$`.execute(stack.db);
    await sql`CREATE TRIGGER test_refuse_hold_audit_trg BEFORE INSERT ON admin_audit
      FOR EACH ROW EXECUTE FUNCTION test_refuse_hold_audit()`.execute(stack.db);
    try {
      await sql`INSERT INTO test_hold_audit_refused VALUES (${holdId})`.execute(stack.db);
      expect((await adminRelease(encodeURIComponent(alias), holdId)).status).toBe(500);
      expect(await holdRow(holdId)).toEqual({ status: 'held', released: null });
      expect(await auditOfHolds([holdId])).toEqual([]);
      await sql`DELETE FROM test_hold_audit_refused`.execute(stack.db);
      expect(await adminRelease(encodeURIComponent(alias), holdId)).toEqual({
        status: 200,
        body: { id: holdId, status: 'released', available: 50 },
      });
      expect(await auditOfHolds([holdId])).toEqual([expect.objectContaining({ target_id: holdId, outcome: 'ok' })]);
    } finally {
      await sql`DROP TRIGGER test_refuse_hold_audit_trg ON admin_audit`.execute(stack.db);
      await sql`DROP FUNCTION test_refuse_hold_audit()`.execute(stack.db);
      await sql`DROP TABLE test_hold_audit_refused`.execute(stack.db);
    }
  });

  it('GET /admin/users/{userId} shows held, available and the holds: active first, then the newest ended (expired included), each with the lots it reserves; holdLimit bounds them', async () => {
    const userId = stripeId('user');
    const first = await grant(userId, 25);
    const second = await grant(userId, 100);
    const early = await hold(userId, 5, 'early', 1);
    const expiresAt = (await readJson(await stack.apiRequest(`/v1/users/${userId}/holds/${early}`))).expiresAt;
    const big = await hold(userId, 30, 'big');
    const small = await hold(userId, 10, 'small');
    await untilPast(expiresAt);
    const active = await hold(userId, 7, 'late');
    const captured = await hold(userId, 4, 'to-capture');
    expect((await post(`/v1/users/${userId}/holds/${captured}/capture`, { amount: 3 })).status).toBe(200);
    expect((await post(`/v1/users/${userId}/holds/${small}/release`)).status).toBe(200);

    const view = await readJson(await stack.apiRequest(`/admin/users/${userId}`));
    expect(view.wallet).toMatchObject({ balance: 122, held: 37, available: 85 });
    expect(view.holds.activeTotal).toBe(2);
    expect(
      view.holds.items.map((h: Json) => [h.id, h.status, h.amount, h.captured, h.released, h.reference, h.lots]),
    ).toEqual([
      // The expired hold's 5 tokens of the first lot are free again: the next hold reserves them first.
      [
        active,
        'held',
        7,
        null,
        null,
        'late',
        [
          { lotId: first, amount: 5 },
          { lotId: second, amount: 2 },
        ],
      ],
      [
        big,
        'held',
        30,
        null,
        null,
        'big',
        [
          { lotId: first, amount: 20 },
          { lotId: second, amount: 10 },
        ],
      ],
      [captured, 'captured', 4, 3, 1, 'to-capture', [{ lotId: second, amount: 4 }]],
      [small, 'released', 10, null, 10, 'small', [{ lotId: second, amount: 10 }]],
      [early, 'expired', 5, null, null, 'early', [{ lotId: first, amount: 5 }]],
    ]);
    expect(view.holds.items[0]).toMatchObject({
      reason: 'hold',
      expiresAt: expect.any(String),
      ledgerReference: null,
      settledAt: null,
    });
    expect(view.holds.items[2]).toMatchObject({ ledgerReference: `hold:${captured}:capture` });
    const bounded = await readJson(await stack.apiRequest(`/admin/users/${userId}?holdLimit=3`));
    expect(bounded.holds.activeTotal).toBe(2);
    expect(bounded.holds.items.map((h: Json) => h.id)).toEqual([active, big, captured]);
    const one = await readJson(await stack.apiRequest(`/admin/users/${userId}?holdLimit=1`));
    expect(one.holds.items.map((h: Json) => h.id)).toEqual([active]);
    expect((await stack.apiRequest(`/admin/users/${userId}?holdLimit=0`)).status).toBe(400);
    const nobody = await readJson(await stack.apiRequest(`/admin/users/${stripeId('user')}`));
    expect({ wallet: nobody.wallet, holds: nobody.holds }).toEqual({
      wallet: { balance: 0, held: 0, available: 0, createdAt: null, lots: [], debt: 0, debts: [] },
      holds: { activeTotal: 0, items: [] },
    });
  });

  it('tally user shows held, available and the holds (text and --json); tally hold release releases once, audited (surface cli), and refuses a captured hold', async () => {
    const env = { DATABASE_URL: stack.database.url };
    const userId = stripeId('user');
    const lotId = await grant(userId, 60);
    const kept = await hold(userId, 15, 'cli-kept');
    const toRelease = await hold(userId, 25, 'cli-release');
    const captured = await hold(userId, 5, 'cli-captured');
    expect((await post(`/v1/users/${userId}/holds/${captured}/capture`)).status).toBe(200);

    const json = await runCli(['user', userId, '--json'], env);
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout);
    expect(view.wallet).toMatchObject({ balance: 55, held: 40, available: 15 });
    expect(view.holds.items.map((h: Json) => [h.id, h.status])).toEqual([
      [toRelease, 'held'],
      [kept, 'held'],
      [captured, 'captured'],
    ]);
    const text = await runCli(['user', userId], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('wallet balance 55, held 40, available 15, debt 0;');
    expect(text.stdout).toContain('holds (3 shown, 2 active; active first, then the newest ended)');
    expect(text.stdout).toMatch(
      new RegExp(`${toRelease}\\s+held\\s+25\\s+-\\s+-\\s+\\S+\\s+cli-release\\s+hold\\s+${lotId}:25`),
    );
    expect(text.stdout).toMatch(new RegExp(`${captured}\\s+captured\\s+5\\s+5\\s+0\\s`));

    const released = await runCli(['hold', 'release', userId, toRelease, '--note', 'ticket 9', '--json'], env);
    expect({ code: released.code, answer: JSON.parse(released.stdout) }).toEqual({
      code: 0,
      answer: { id: toRelease, status: 'released', available: 40, alreadyReleased: false },
    });
    const again = await runCli(['hold', 'release', userId, toRelease, '--json'], env);
    expect(JSON.parse(again.stdout)).toEqual({
      id: toRelease,
      status: 'released',
      available: 40,
      alreadyReleased: true,
    });
    const refused = await runCli(['hold', 'release', userId, captured, '--json'], env);
    expect({ code: refused.code, answer: JSON.parse(refused.stdout) }).toEqual({
      code: 1,
      answer: { error: { code: 'hold_not_active', message: `hold ${captured} is captured` } },
    });
    const textRelease = await runCli(['hold', 'release', userId, kept], env);
    expect({ code: textRelease.code, stdout: textRelease.stdout }).toEqual({
      code: 0,
      stdout: `released ${kept} of ${userId}; available 55\n`,
    });
    const usage = await runCli(['hold', 'release', userId, 'hold_bad'], env);
    expect(usage.code).toBe(2);
    expect(await holdRow(toRelease)).toEqual({ status: 'released', released: 25 });
    expect(await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))).toMatchObject({
      balance: 55,
      held: 0,
      available: 55,
    });
    expect(
      (await auditOfHolds([toRelease, captured, kept])).map((row) => [row.surface, row.target_id, row.outcome]),
    ).toEqual([
      ['cli', toRelease, 'ok'],
      ['cli', toRelease, 'ok'],
      ['cli', captured, 'hold_not_active'],
      ['cli', kept, 'ok'],
    ]);
    const [note] = await auditOf(stack.db, { targetIds: [toRelease] }, ['action', 'request']);
    expect(note).toMatchObject({
      action: 'hold.release',
      request: expect.objectContaining({ body: { note: 'ticket 9' } }),
    });
  });
});
