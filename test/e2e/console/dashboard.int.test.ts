import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { findWallet, inboxJobId, queueCatalog } from '@tally/billing-core';
import { chromiumPath, haveChromium, launchBrowser, runBrowserTest } from '../../support/browser';
import { basicAuth as basic, parkTokenPurchase, startBrokenRevenueCatWorker } from '../../support/parked-events';
import { adminKey, appKey, eventually } from '../../support/stack';
import { suiteStack } from '../../support/suite';

const outputDir = path.join(__dirname, '..', '..', '..', 'test-output');

if (!runBrowserTest) {
  process.stderr.write(
    `[dashboard test] ${chromiumPath} is missing: the browser test is skipped (apt-get install chromium)\n`,
  );
}

describe('the queue dashboard at /admin/queues', () => {
  const stack = suiteStack();
  afterEach(() => stack.stopWorkers());

  const dashboard = (headers: Record<string, string> = {}, subPath = '') =>
    fetch(`http://127.0.0.1:${stack.api.port}/admin/queues${subPath}`, { headers });

  it('asks for Basic credentials and refuses missing, wrong and app keys', async () => {
    const missing = await dashboard();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Basic realm="tally-admin"');
    expect(await missing.json()).toMatchObject({ error: { code: 'unauthorized' } });

    for (const headers of [
      { authorization: basic('ops', 'wrong') },
      { authorization: basic('ops', appKey) },
      { authorization: `Bearer ${appKey}` },
      { authorization: `Bearer ${adminKey}x` },
      { authorization: basic(adminKey, '') },
    ]) {
      expect((await dashboard(headers)).status).toBe(401);
      expect((await dashboard(headers, '/api/queues')).status).toBe(401);
    }

    // The admin key as the Basic password (any user name) or as a bearer token.
    for (const headers of [{ authorization: basic('anyone', adminKey) }, { authorization: `Bearer ${adminKey}` }]) {
      const page = await dashboard(headers);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
    }
  });

  it('serves the dashboard with nosniff and framable only by its own origin', async () => {
    const page = await dashboard({ authorization: `Bearer ${adminKey}` });
    expect(page.status).toBe(200);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    // The refusal is not framable either, and no page upgrades its own requests to https.
    const refused = await dashboard();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(page.headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
  });

  it('lists every queue of the queue catalog', async () => {
    const response = await dashboard({ authorization: `Bearer ${adminKey}` }, '/api/queues');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { queues: { name: string }[] };
    const shown = body.queues.map((queue) => queue.name).sort();
    expect(shown).toEqual(
      Object.values(queueCatalog)
        .map((definition) => definition.name)
        .sort(),
    );
  });

  it('refuses a state-changing dashboard request sent from another site with Basic credentials', async () => {
    const response = await fetch(`http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/inbox/retry/failed`, {
      method: 'PUT',
      headers: {
        authorization: basic('ops', adminKey),
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
      },
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'cross_site_request' } });
  });

  (runBrowserTest ? it : it.skip)(
    'in a real browser: a parked event retried from the dashboard is processed once',
    async () => {
      expect({ chromium: chromiumPath, installed: haveChromium }).toEqual({ chromium: chromiumPath, installed: true });
      const userId = 'dashboard-user';
      const providerEventId = 'rc-dashboard-1';
      // A handler that fails for good (non-retryable) until it is "fixed", like a bug deployed and then corrected.
      const worker = startBrokenRevenueCatWorker(stack);
      await parkTokenPurchase(stack, providerEventId, userId);
      const parked = await stack.inboxRow('revenuecat', providerEventId);
      expect(parked).toMatchObject({ outcome_code: 'invalid_event', attempts: 1 });
      const jobId = inboxJobId(parked.id);
      const failedJob = await eventually('the job to be failed in BullMQ', async () => {
        const job = await stack.queue.getJob(jobId);
        return job && (await job.getState()) === 'failed' ? job : undefined;
      });
      // Kept for the catalog's retention window, so the dashboard can show it.
      expect(failedJob.opts.removeOnFail).toEqual({ age: queueCatalog.inbox.retention.failedAgeSeconds });
      expect(failedJob.opts.removeOnComplete).toEqual({
        age: queueCatalog.inbox.retention.completedAgeSeconds,
        count: queueCatalog.inbox.retention.completedCount,
      });

      worker.fix();
      mkdirSync(outputDir, { recursive: true });
      // A fresh profile in a temporary directory; playwright-core drives the system chromium and downloads nothing.
      const browser = await launchBrowser({ username: 'operator', password: adminKey });
      try {
        const { page } = browser;
        // helmet's Content-Security-Policy must not block any of the dashboard's own scripts,
        // styles or requests: chromium reports every violation on the console.
        const cspViolations: string[] = [];
        page.on('console', (message) => {
          if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
        });
        await page.goto(`http://127.0.0.1:${stack.api.port}/admin/queues/queue/inbox?status=failed`);
        const card = page.locator(`text=${jobId}`).first();
        await card.waitFor({ timeout: 20_000 });
        await page.getByText('simulated handler bug').first().waitFor();
        await page.screenshot({ path: path.join(outputDir, 'dashboard-parked.png'), fullPage: true });

        // The job card's retry button is an icon (the queue-wide one says "Retry all"); it asks to confirm.
        await page.locator('button:has(svg.lucide-refresh-cw)').filter({ hasNotText: 'Retry all' }).first().click();
        await page.getByText('Are you sure that you want to retry this job?').waitFor();
        await page.getByRole('button', { name: 'Confirm', exact: true }).click();

        const row = await eventually('the retried event to be processed', async () => {
          const [current] = await stack.inboxRows('revenuecat', providerEventId);
          return current?.status === 'processed' ? current : undefined;
        });
        expect(row).toMatchObject({ outcome_code: 'credited', attempts: 1, last_error: null });

        await page.goto(`http://127.0.0.1:${stack.api.port}/admin/queues/queue/inbox?status=completed`);
        await page.locator(`text=${jobId}`).first().waitFor({ timeout: 20_000 });
        await page.screenshot({ path: path.join(outputDir, 'dashboard-retried.png'), fullPage: true });
        expect(cspViolations).toEqual([]);
      } finally {
        await browser.close();
      }

      const ledger = await stack.db.selectFrom('ledger_entries').selectAll().where('user_id', '=', userId).execute();
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ reference: `revenuecat:event:${providerEventId}`, amount: 100 });
      expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 100 });

      // A finished event is replayed, not retried: the dashboard refuses to retry its completed job.
      const again = await fetch(`http://127.0.0.1:${stack.api.port}/admin/queues/api/queues/inbox/${jobId}/retry`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(again.status).toBe(400);
      expect(JSON.stringify(await again.json())).toContain('replay');
    },
    90_000,
  );

  it('a job that runs again for a parked event without a requeue leaves it parked and credits nothing', async () => {
    const userId = 'stray-user';
    const providerEventId = 'rc-stray-1';
    const worker = startBrokenRevenueCatWorker(stack);
    const parked = { id: await parkTokenPurchase(stack, providerEventId, userId) };
    const job = await eventually('the job to be failed', async () => {
      const found = await stack.queue.getJob(inboxJobId(parked.id));
      return found && (await found.getState()) === 'failed' ? found : undefined;
    });
    worker.fix();

    // BullMQ's own retry (what a stalled re-run or a queue-level retry amounts to), not the dashboard's.
    await job.retry('failed');
    await eventually('the stray job to complete', async () => (await job.getState()) === 'completed');
    expect((await stack.queue.getJob(job.id ?? ''))?.returnvalue).toEqual({ status: 'skipped', rowStatus: 'failed' });
    const [row] = await stack.inboxRows('revenuecat', providerEventId);
    expect(row).toMatchObject({ status: 'failed', outcome_code: 'invalid_event', attempts: 1 });
    expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 0 });
  });
});
