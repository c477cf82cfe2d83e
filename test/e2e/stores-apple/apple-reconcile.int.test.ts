import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { productionOnlyPolicy } from '@tally/billing-core';
import { testRedisUrl } from '@tally/billing-core/testing';
import { sql } from 'kysely';
import { workerEnvSchema } from '../../../apps/worker/src/config';
import { suiteStackWithFakeAppStore } from '../../support/app-store';
import {
  appleAppAppleId,
  appleBundleId,
  appleCharge,
  appleNotificationPayload,
  appleSignedPayload,
  appleUser,
  deliverApple,
  postApple,
} from '../../support/apple-notifications';
import { ApplePki } from '../../support/apple-signing';
import { auditOf } from '../../support/audit';
import { runCli } from '../../support/built-process';
import { fakeAppleIssuerId, fakeAppleKeyId } from '../../support/fakes/fake-app-store';
import { ledgerOf } from '../../support/ledger';
import { type Json, readJson } from '../../support/stack';

const DAY = 24 * 3600_000;

/**
 * Apple reconciliation (docs/stores-apple.md, "Reconciliation"): Get Notification History of the
 * (fake) App Store Server API, which checks Tally's JWT, read over a window; every listed
 * notification verified with ingest's own check; the ones the inbox lacks recorded once (source
 * backfill) and processed. Through `POST /admin/reconcile/apple`, `tally reconcile --provider
 * apple` and the worker's apple-reconcile role, against real Postgres and Redis.
 */
describe('Apple reconciliation over the notification history', () => {
  const { stack, fake, pki } = suiteStackWithFakeAppStore({
    // Production only: one history to read (the fake answers both hosts alike).
    policy: productionOnlyPolicy,
    worker: { roles: ['inbox', 'relay'] },
  });
  const keyDir = mkdtempSync(path.join(tmpdir(), 'tally-apple-key-'));
  // Pages of two: every run with more than two notifications follows a pagination token.
  beforeAll(() => {
    fake.historyPageSize = 2;
  });
  beforeEach(() => fake.clearHistory());
  afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

  const reconcile = async (body: Record<string, unknown> = {}) => {
    const answer = await stack.apiRequest('/admin/reconcile/apple', { method: 'POST', body });
    expect(answer.status).toBe(200);
    return readJson(answer);
  };
  const historyReads = () => fake.requests.filter((request) => request.path === '/inApps/v1/notifications/history');
  /** A pack purchase Apple has in its history (sent at `sentAt`) whose notification never reached ingest. */
  const lostPurchase = async (sentAt = Date.now()) => {
    const { userId, token } = await appleUser(stack, 'apple-r');
    const transactionId = `6000${Date.now()}${Math.floor(Math.random() * 1e4)}`;
    const uuid = randomUUID();
    const signedPayload = appleSignedPayload(pki, { ...appleCharge(transactionId, token), uuid });
    fake.addToHistory(signedPayload, sentAt);
    return { userId, token, transactionId, uuid, signedPayload };
  };
  const balanceOf = async (userId: string) =>
    (await readJson(await stack.apiRequest(`/v1/users/${userId}/wallet`))).balance as number;

  it('records a notification ingest never got, once, and it is processed: the pack is credited once; a second run records nothing', async () => {
    const lost = [await lostPurchase(Date.now() - 2 * DAY), await lostPurchase(), await lostPurchase()];
    const readsBefore = historyReads().length;
    const report = await reconcile();
    expect(report).toMatchObject({
      ok: false,
      dryRun: false,
      windowDays: 3,
      environments: ['production'],
      truncated: false,
      seen: 3,
      alreadyStored: 0,
      recorded: 3,
      refused: 0,
      refusedNotifications: [],
    });
    // Oldest first, as Apple would have delivered them.
    expect(report.missingNotifications.map((item: Json) => item.notificationUUID)).toEqual(lost.map((l) => l.uuid));
    expect(report.missingNotifications[0]).toEqual({
      notificationUUID: lost[0]?.uuid,
      type: 'ONE_TIME_CHARGE',
      environment: 'production',
      signedDate: expect.any(String),
      result: 'ingested',
      inboxEventId: expect.any(Number),
    });
    // Two pages of at most two, each read with Tally's JWT (the fake refuses any other).
    expect(historyReads().length - readsBefore).toBe(2);
    expect(fake.refusedTokens).toEqual([]);

    for (const [index, item] of lost.entries()) {
      const row = await stack.finishedInboxRow('apple', item.uuid);
      expect(row).toMatchObject({
        id: report.missingNotifications[index].inboxEventId,
        source: 'backfill',
        status: 'processed',
        outcome_code: 'credited',
        environment: 'production',
        // Filed under the user its appAccountToken named.
        user_id: item.userId,
        raw_body: JSON.stringify({ signedPayload: item.signedPayload }),
      });
      expect(await balanceOf(item.userId)).toBe(100);
      expect(await ledgerOf(stack.db, item.userId, ['reference', 'amount', 'inbox_event_id'])).toEqual([
        { reference: `apple:transaction:${item.transactionId}`, amount: 100, inbox_event_id: row.id },
      ]);
    }
    // The late delivery Apple may still make is a duplicate of the recorded row.
    const late = lost[1] as (typeof lost)[number];
    const delivered = await postApple(stack, JSON.stringify({ signedPayload: late.signedPayload }));
    expect(await readJson(delivered)).toEqual({ status: 'duplicate', eventId: late.uuid });

    const again = await reconcile();
    expect(again).toMatchObject({ ok: true, seen: 3, alreadyStored: 3, recorded: 0, missingNotifications: [] });
    for (const item of lost) {
      expect(await stack.inboxRows('apple', item.uuid)).toHaveLength(1);
      expect(await balanceOf(item.userId)).toBe(100);
    }
  });

  it('does not record a notification ingest already stored', async () => {
    const { userId, token } = await appleUser(stack, 'apple-r');
    const transactionId = `6100${Date.now()}`;
    const uuid = randomUUID();
    const signedPayload = appleSignedPayload(pki, { ...appleCharge(transactionId, token), uuid });
    await deliverApple(stack, pki, { ...appleCharge(transactionId, token), uuid });
    expect(await stack.finishedInboxRow('apple', uuid)).toMatchObject({ outcome_code: 'credited' });
    // Apple lists it (with a send attempt that reached ingest) in its history.
    fake.addToHistory(signedPayload);

    const report = await reconcile();
    expect(report).toMatchObject({ ok: true, seen: 1, alreadyStored: 1, recorded: 0, refused: 0 });
    expect(report.missingNotifications).toEqual([]);
    const rows = await stack.inboxRows('apple', uuid);
    expect(rows.map((row) => row.source)).toEqual(['webhook']);
    expect(await balanceOf(userId)).toBe(100);
  });

  it('refuses a tampered or unchained notification of the history and stores nothing of it', async () => {
    const otherRoot = ApplePki.create({ name: 'Other' });
    try {
      const { userId, token } = await appleUser(stack, 'apple-r');
      // Signed by a chain that does not end at the pinned root.
      const unchainedUuid = randomUUID();
      fake.addToHistory(
        appleSignedPayload(otherRoot, { ...appleCharge(`6200${Date.now()}`, token), uuid: unchainedUuid }),
      );
      // A genuine notification whose payload was changed after signing (another transaction).
      const tamperedUuid = randomUUID();
      const genuine = appleSignedPayload(pki, { ...appleCharge(`6201${Date.now()}`, token), uuid: tamperedUuid });
      const [header, , signature] = genuine.split('.');
      const changed = appleNotificationPayload(pki, {
        type: 'ONE_TIME_CHARGE',
        uuid: tamperedUuid,
        transaction: { transactionId: `6202${Date.now()}`, appAccountToken: token, quantity: 50 },
      });
      fake.addToHistory(`${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`);
      const genuineLost = await lostPurchase();

      const report = await reconcile();
      expect(report).toMatchObject({ ok: false, seen: 3, alreadyStored: 0, recorded: 1, refused: 2 });
      expect(report.refusedNotifications).toEqual([
        { listedBy: 'production', code: 'invalid_signature', reason: expect.stringContaining('signedPayload') },
        { listedBy: 'production', code: 'invalid_signature', reason: expect.stringContaining('signedPayload') },
      ]);
      expect(report.missingNotifications.map((item: Json) => item.notificationUUID)).toEqual([genuineLost.uuid]);
      expect(await stack.inboxRows('apple', unchainedUuid)).toEqual([]);
      expect(await stack.inboxRows('apple', tamperedUuid)).toEqual([]);
      expect(await stack.finishedInboxRow('apple', genuineLost.uuid)).toMatchObject({ outcome_code: 'credited' });
      expect(await balanceOf(userId)).toBe(0);
    } finally {
      otherRoot.dispose();
    }
  });

  it('a dry run reports what it would record and records nothing; the window bounds what is read', async () => {
    const old = await lostPurchase(Date.now() - 10 * DAY);
    const recent = await lostPurchase();
    const dryRun = await reconcile({ dryRun: true });
    expect(dryRun).toMatchObject({ ok: false, dryRun: true, seen: 1, recorded: 0 });
    expect(dryRun.missingNotifications).toEqual([
      expect.objectContaining({ notificationUUID: recent.uuid, result: 'would_ingest', inboxEventId: null }),
    ]);
    expect(await stack.inboxRows('apple', recent.uuid)).toEqual([]);

    // Eleven days reach the older one too.
    const wide = await reconcile({ windowDays: 11 });
    expect(wide).toMatchObject({ windowDays: 11, seen: 2, recorded: 2 });
    expect(wide.missingNotifications.map((item: Json) => item.notificationUUID)).toEqual([old.uuid, recent.uuid]);
    expect(await stack.finishedInboxRow('apple', old.uuid)).toMatchObject({ outcome_code: 'credited' });

    const tooWide = await stack.apiRequest('/admin/reconcile/apple', { method: 'POST', body: { windowDays: 181 } });
    expect(tooWide.status).toBe(400);
  });

  it('audits each run of the route: a started row before it calls Apple, then its answer', async () => {
    await lostPurchase();
    const before = (await auditOf(stack.db, { action: 'reconcile.apple' })).length;
    await reconcile({ windowDays: 2 });
    expect((await auditOf(stack.db, { action: 'reconcile.apple' })).slice(before)).toEqual([
      expect.objectContaining({ surface: 'api', status_code: null, outcome: 'started' }),
      expect.objectContaining({ surface: 'api', status_code: 200, outcome: 'ok' }),
    ]);
  });

  it('tally reconcile --provider apple reports as the route does; exit 1 when something was missing or refused, 0 when nothing', async () => {
    const keyPath = path.join(keyDir, 'SubscriptionKey.p8');
    writeFileSync(keyPath, fake.key.pkcs8Pem);
    const env = {
      DATABASE_URL: stack.database.url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: stack.prefix,
      APPLE_KEY_ID: fakeAppleKeyId,
      APPLE_ISSUER_ID: fakeAppleIssuerId,
      APPLE_PRIVATE_KEY_PATH: keyPath,
      APPLE_BUNDLE_ID: appleBundleId,
      APPLE_APP_APPLE_ID: String(appleAppAppleId),
      APPLE_ROOT_CERTIFICATES: pki.rootPath,
      APPLE_API_BASE_URL: fake.baseUrl,
    };
    const cli = async (args: string[], expectedCode: number, cliEnv: Record<string, string> = env) => {
      const result = await runCli(['reconcile', '--provider', 'apple', ...args], cliEnv);
      expect({ args, code: result.code }).toEqual({ args, code: expectedCode });
      return result;
    };
    const lost = await lostPurchase();

    const dryRun = JSON.parse((await cli(['--dry-run', '--json'], 1)).stdout);
    expect(dryRun.missingNotifications).toEqual([
      expect.objectContaining({ notificationUUID: lost.uuid, result: 'would_ingest' }),
    ]);
    expect(await stack.inboxRows('apple', lost.uuid)).toEqual([]);

    const first = JSON.parse((await cli(['--days', '2', '--json'], 1)).stdout);
    expect(first).toMatchObject({ ok: false, windowDays: 2, seen: 1, recorded: 1, refused: 0 });
    expect(await stack.finishedInboxRow('apple', lost.uuid)).toMatchObject({
      source: 'backfill',
      outcome_code: 'credited',
    });

    const text = await cli([], 0);
    expect(text.stdout).toContain('1 already stored, 0 recorded, 0 refused; nothing found');

    // A notification of the history that fails the check: refused, exit 1, nothing stored.
    const otherRoot = ApplePki.create({ name: 'Other CLI' });
    try {
      const forgedUuid = randomUUID();
      fake.addToHistory(
        appleSignedPayload(otherRoot, { ...appleCharge(`6300${Date.now()}`, lost.token), uuid: forgedUuid }),
      );
      const refused = JSON.parse((await cli(['--json'], 1)).stdout);
      expect(refused).toMatchObject({ ok: false, recorded: 0, refused: 1, missingNotifications: [] });
      expect(await stack.inboxRows('apple', forgedUuid)).toEqual([]);
    } finally {
      otherRoot.dispose();
    }

    const runs = await stack.db
      .selectFrom('admin_audit')
      .select(['surface', 'outcome'])
      .where('action', '=', 'reconcile.apple')
      .where('surface', '=', 'cli')
      .execute();
    expect(runs.filter((run) => run.outcome === 'ok')).toHaveLength(4);

    // A window past Apple's history is a usage error; unconfigured, nothing is called.
    await cli(['--days', '181'], 2);
    const readsBefore = historyReads().length;
    const { APPLE_ROOT_CERTIFICATES: _unset, ...withoutRoots } = env;
    const unconfigured = JSON.parse((await cli(['--json'], 1, withoutRoots)).stdout);
    expect(unconfigured).toEqual({ error: { code: 'not_configured', message: expect.stringContaining('APPLE_') } });
    expect(historyReads()).toHaveLength(readsBefore);
  }, 180_000);

  it('the apple-reconcile role is opt-in, runs a pass under a lease and sets its findings', async () => {
    const env = { DATABASE_URL: 'postgres://tally@127.0.0.1:5432/tally' };
    const byDefault = workerEnvSchema.parse(env).WORKER_ROLES;
    expect(byDefault).not.toContain('apple-reconcile');
    expect(workerEnvSchema.parse({ ...env, WORKER_ROLES: 'all' }).WORKER_ROLES).toEqual(byDefault);
    expect(workerEnvSchema.parse({ ...env, WORKER_ROLES: 'all,apple-reconcile' }).WORKER_ROLES).toContain(
      'apple-reconcile',
    );

    const worker = stack.startWorker({ roles: ['apple-reconcile'] });
    const loop = worker.loops['apple-reconcile'];
    if (!loop) throw new Error('the apple-reconcile role started no loop');
    await loop.runOnce();
    const lost = await lostPurchase();
    // Another replica holds the lease: this one skips its turn and asks Apple nothing.
    await sql`INSERT INTO leases (name, holder, acquired_at, expires_at)
              VALUES ('reconcile-apple', 'other-replica', now(), now() + interval '1 minute')`.execute(stack.db);
    const readsBefore = historyReads().length;
    await loop.runOnce();
    expect(historyReads()).toHaveLength(readsBefore);
    expect(await stack.inboxRows('apple', lost.uuid)).toEqual([]);
    await sql`DELETE FROM leases WHERE name = 'reconcile-apple'`.execute(stack.db);

    await loop.runOnce();
    expect(await stack.finishedInboxRow('apple', lost.uuid)).toMatchObject({
      source: 'backfill',
      outcome_code: 'credited',
    });
    const metrics = await worker.metrics.registry.metrics();
    expect(metrics).toContain('tally_apple_reconcile_findings{kind="missing_notifications",service="worker"} 1');
    expect(metrics).toContain('tally_apple_reconcile_findings{kind="refused_notifications",service="worker"} 0');
    expect(metrics).toMatch(/tally_apple_reconcile_last_run_timestamp_seconds\{service="worker"\} \d/);
  });
});

describe('Apple reconciliation unconfigured', () => {
  // The App Store Server API is configured, the notification check is not: no run, no call.
  const { stack, fake } = suiteStackWithFakeAppStore({ verifyNotifications: false });

  it('answers 503 not_configured and asks Apple nothing', async () => {
    const answer = await stack.apiRequest('/admin/reconcile/apple', { method: 'POST', body: {} });
    expect({ status: answer.status, body: await readJson(answer) }).toEqual({
      status: 503,
      body: { error: { code: 'not_configured', message: expect.stringContaining('APPLE_ROOT_CERTIFICATES') } },
    });
    expect(fake.requests).toEqual([]);
  });
});
