import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { findWallet, toWebhookId } from '@tally/billing-core';
import { deliveringTo } from '../../support/app-webhook-worker';
import { chromiumPath, haveChromium, launchBrowser, runBrowserTest } from '../../support/browser';
import { revenueCatTokenPurchase } from '../../support/events';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { parkTokenPurchase, startBrokenRevenueCatWorker } from '../../support/parked-events';
import { adminKey, eventually, type Json, readJson, TestStack } from '../../support/stack';
import { untilAppWebhookMessage } from '../../support/waits';

const outputDir = path.join(__dirname, '..', '..', '..', 'test-output');

if (!runBrowserTest) {
  process.stderr.write(
    `[console test] ${chromiumPath} is missing: the browser test is skipped (apt-get install chromium)\n`,
  );
}

/** A page on another origin that frames the console and holds a form posting to it. */
function startOtherSite(consoleOrigin: string, parkedId: number): Promise<Server> {
  const body = `<!doctype html><html><body>
<h1>Another site</h1>
<iframe id="framed" title="framed console" src="${consoleOrigin}/admin/console" width="600" height="300"></iframe>
<form method="post" action="${consoleOrigin}/admin/console/events/${parkedId}/requeue"><button id="go" type="submit">Win a prize</button></form>
</body></html>`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('the console in a real browser', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;

  beforeAll(async () => {
    stack = await TestStack.start();
    receiver = await AppWebhookReceiver.start([newWebhookSecret()]);
  });
  afterAll(async () => {
    await stack.stop();
    await receiver.stop();
  });
  afterEach(() => stack.stopWorkers());

  (runBrowserTest ? it : it.skip)(
    'support finds a user by keyboard, sees the credit, requeues a parked event and watches it processed; another site can neither frame nor post to it',
    async () => {
      expect({ chromium: chromiumPath, installed: haveChromium }).toEqual({ chromium: chromiumPath, installed: true });
      const userId = 'browser-user';
      const worker = startBrokenRevenueCatWorker(stack);
      const parked = await parkTokenPurchase(stack, 'rc-browser-parked', userId);
      const other = await parkTokenPurchase(stack, 'rc-browser-other', 'other-user');
      worker.fix();
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-browser-ok', userId }));
      await eventually('the good purchase to be credited', async () => {
        const [row] = await stack.inboxRows('revenuecat', 'rc-browser-ok');
        return row?.status === 'processed';
      });
      expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 100 });

      const origin = `http://127.0.0.1:${stack.api.port}`;
      const otherSite = await startOtherSite(origin, other);
      mkdirSync(outputDir, { recursive: true });
      const browser = await launchBrowser({ username: 'support', password: adminKey });
      try {
        const { page } = browser;

        // Log in (Basic) and search by keyboard only.
        const overview = await page.goto(`${origin}/admin/console`);
        expect(overview?.status()).toBe(200);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await page.screenshot({ path: path.join(outputDir, 'console-overview.png'), fullPage: true });
        await page.getByLabel('Search').focus();
        await page.keyboard.type(userId);
        await page.keyboard.press('Enter');
        await page.waitForURL(`${origin}/admin/console/users/${userId}`, { timeout: 5_000 }).catch(async (error) => {
          throw new Error(`${String(error)}\n${await page.content()}`);
        });
        expect(await page.locator('#balance').textContent()).toBe('100');
        // In the ledger (the lots table names the credit's reference too, as its lot's source).
        await page.locator('#ledger + table').getByText('revenuecat:event:rc-browser-ok', { exact: true }).waitFor();
        // The parked event is listed first, with its error and attempts.
        const firstEvent = page.locator('#events ~ table tbody tr').first();
        expect(await firstEvent.textContent()).toContain('rc-browser-parked');
        expect(await firstEvent.textContent()).toContain('simulated handler bug');
        await page.screenshot({ path: path.join(outputDir, 'console-user.png'), fullPage: true });

        // Requeue it with the button (keyboard: focus it and press Enter).
        const requeue = page.getByRole('button', { name: `Requeue #${parked}` });
        await requeue.focus();
        await page.keyboard.press('Enter');
        await page
          .getByText('Requeued: the event is back in the queue')
          .waitFor({ timeout: 5_000 })
          .catch(async (error) => {
            throw new Error(`${String(error)}\n${await page.content()}`);
          });
        const row = await eventually('the requeued event to be processed', async () => {
          const [current] = await stack.inboxRows('revenuecat', 'rc-browser-parked');
          return current?.status === 'processed' ? current : undefined;
        });
        expect(row).toMatchObject({ outcome_code: 'credited', attempts: 1, last_error: null });
        await page.reload();
        expect(await page.locator('#balance').textContent()).toBe('200');
        await page
          .locator('#ledger + table')
          .getByText('revenuecat:event:rc-browser-parked', { exact: true })
          .waitFor();

        // The event page opens with its raw body.
        await page
          .getByRole('link', { name: `#${parked}` })
          .first()
          .click();
        await page.getByRole('heading', { name: 'Raw body' }).waitFor();
        expect(await page.locator('pre').textContent()).toContain('"app_user_id": "browser-user"');
        await page.getByRole('cell', { name: 'inbox.requeue' }).waitFor();

        // A user as RevenueCat names an anonymous one, with a hold and a grant under references as
        // long as real ones: at 1,400 px the user page fits its width (long ids wrap in their
        // cells), it never scrolls sideways.
        const anonymous = '$RCAnonymousID:0f1e2d3c4b5a69788796a5b4c3d2e1f0';
        await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-browser-anonymous', userId: anonymous }));
        await eventually('the anonymous purchase to be credited', async () => {
          const [credited] = await stack.inboxRows('revenuecat', 'rc-browser-anonymous');
          return credited?.status === 'processed';
        });
        const anonymousPath = `/v1/users/${encodeURIComponent(anonymous)}`;
        for (const [route, body] of [
          ['holds', { amount: 10, reference: 'llm-completion-2026-12-06T23-59-59Z-req_0123456789abcdef01234567' }],
          ['grants', { amount: 5, reference: 'welcome-bonus-campaign-2026-winter-cohort-b-0123456789abcdef' }],
        ] as const) {
          expect((await stack.apiRequest(`${anonymousPath}/${route}`, { method: 'POST', body })).status).toBe(201);
        }
        await page.setViewportSize({ width: 1400, height: 900 });
        await page.goto(`${origin}/admin/console/users/${encodeURIComponent(anonymous)}`);
        expect(await page.locator('#balance').textContent()).toBe('105');
        const sideways = await page.evaluate<number>(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect({ width: 1400, sideways }).toEqual({ width: 1400, sideways: 0 });
        await page.screenshot({ path: path.join(outputDir, 'console-user-1400.png'), fullPage: true });

        // Another site: the framed console does not render, and its form POST is refused.
        const port = (otherSite.address() as AddressInfo).port;
        // Every answer on the console's paths (the 401 before the key, too) forbids framing.
        const framedResponse = page.waitForResponse((response) => response.url() === `${origin}/admin/console`);
        await page.goto(`http://localhost:${port}/`);
        const framed = await framedResponse;
        expect(framed.headers()['x-frame-options']).toBe('DENY');
        expect(framed.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
        const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
        expect(
          await frame
            ?.locator('body')
            .textContent()
            .catch(() => ''),
        ).not.toContain('Tally console');
        const auditBefore = await stack.db.selectFrom('admin_audit').selectAll().execute();
        await page.locator('#go').click();
        await page.waitForURL(`${origin}/admin/console/events/${other}/requeue`);
        expect(await page.locator('body').textContent()).toContain('cross_site_request');
        const [untouched] = await stack.inboxRows('revenuecat', 'rc-browser-other');
        expect(untouched).toMatchObject({ status: 'failed', attempts: 1 });
        expect(await stack.db.selectFrom('admin_audit').selectAll().execute()).toEqual(auditBefore);

        // The audit lists the console's requeue, in the console and at GET /admin/audit.
        await page.goto(`${origin}/admin/console/audit`);
        await page.getByRole('cell', { name: 'inbox.requeue' }).first().waitFor();
        await page.screenshot({ path: path.join(outputDir, 'console-audit.png'), fullPage: true });
      } finally {
        await browser.close();
        await new Promise((resolve) => otherSite.close(resolve));
      }

      const audit = (await readJson(await stack.apiRequest('/admin/audit'))) as Json;
      expect(audit.actions).toEqual([
        expect.objectContaining({
          action: 'inbox.requeue',
          surface: 'console',
          target: { kind: 'inbox_event', id: String(parked) },
          actor: 'support',
          statusCode: 303,
          outcome: 'ok',
        }),
      ]);
      expect(await findWallet(stack.db, userId)).toEqual({ userId, balance: 200 });
      expect(await findWallet(stack.db, 'other-user')).toEqual({ userId: 'other-user', balance: 0 });
    },
    120_000,
  );

  (runBrowserTest ? it : it.skip)(
    "an operator finds a failed app-webhook message, redelivers it with the button once the app's receiver has recovered, and watches it delivered",
    async () => {
      const userId = 'browser-msg-user';
      // The app's receiver (a real HTTP server verifying every delivery with standardwebhooks) is down.
      receiver.defaultAnswer = { kind: 'status', status: 503, body: 'receiver is down' };
      stack.startWorker(
        deliveringTo(receiver, { roles: ['inbox', 'relay', 'app-webhooks'], retryScheduleMs: [50, 50] }),
      );
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'rc-browser-msg', userId }));
      const failed = await untilAppWebhookMessage(
        stack.db,
        userId,
        'failed',
        'the credit message to fail for good',
        20_000,
      );
      const id = toWebhookId(failed.message_id);
      expect(receiver.deliveries.filter((delivery) => delivery.webhookId === id).map((d) => d.answeredWith)).toEqual([
        503, 503, 503,
      ]);
      // The app is back.
      receiver.defaultAnswer = { kind: 'status', status: 204 };

      const origin = `http://127.0.0.1:${stack.api.port}`;
      mkdirSync(outputDir, { recursive: true });
      const browser = await launchBrowser({ username: 'operator', password: adminKey });
      try {
        const { page } = browser;
        await page.goto(`${origin}/admin/console`);
        await page.getByRole('heading', { name: 'Last 24 hours, per hour' }).waitFor();
        // From the overview's count to the failed messages, then filtered to the user by keyboard.
        await page.getByRole('link', { name: 'App webhooks', exact: true }).click();
        await page.getByRole('heading', { name: 'App-webhook messages' }).waitFor();
        await page.getByLabel('Status').selectOption('failed');
        await page.getByLabel('User', { exact: true }).focus();
        await page.keyboard.type(userId);
        await page.keyboard.press('Enter');
        await page.waitForURL(/status=failed/);
        const rows = page.locator('main table tbody tr');
        expect(await rows.count()).toBe(1);
        expect(await rows.first().textContent()).toContain('HTTP 503: receiver is down');

        // The message: its body as sent and its attempts; Redeliver by keyboard.
        await page.getByRole('link', { name: id }).click();
        await page.getByRole('heading', { name: /^Body/ }).waitFor();
        expect(await page.locator('pre').textContent()).toContain(`"userId": "${userId}"`);
        expect(await page.locator('dl.facts').textContent()).toContain('3 in its current schedule');
        await page.screenshot({ path: path.join(outputDir, 'console-message-failed.png'), fullPage: true });
        const redeliver = page.getByRole('button', { name: `Redeliver ${id}` });
        await redeliver.focus();
        await page.keyboard.press('Enter');
        await page
          .getByText('Redelivered: the message is pending again')
          .waitFor({ timeout: 5_000 })
          .catch(async (error) => {
            throw new Error(`${String(error)}\n${await page.content()}`);
          });

        // Watch it delivered: the page, reloaded, says so.
        await eventually('the console to show the message delivered', async () => {
          await page.reload();
          const status = await page.locator('dl.facts dd').first().textContent();
          const last = await page.locator('dl.facts dd').nth(2).textContent();
          return status === 'delivered' && last === 'HTTP 204' ? true : undefined;
        });
        await page.getByRole('cell', { name: 'app_webhook.redeliver' }).waitFor();
        await page.screenshot({ path: path.join(outputDir, 'console-message-delivered.png'), fullPage: true });
      } finally {
        await browser.close();
      }

      // The app got it once, verified, under the same webhook-id as the failed attempts.
      const accepted = receiver.accepted.filter((delivery) => delivery.webhookId === id);
      expect(accepted).toHaveLength(1);
      expect(accepted[0]?.body).toMatchObject({ type: 'wallet.credited', data: { userId, amount: 100 } });
      expect(receiver.rejected).toEqual([]);
      const audit = (await readJson(
        await stack.apiRequest(`/admin/audit?targetKind=app_webhook_message&targetId=${id}`),
      )) as Json;
      expect(audit.actions).toEqual([
        expect.objectContaining({
          action: 'app_webhook.redeliver',
          surface: 'console',
          target: { kind: 'app_webhook_message', id },
          actor: 'operator',
          statusCode: 303,
          outcome: 'ok',
        }),
      ]);
    },
    120_000,
  );
});
