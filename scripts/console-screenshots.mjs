// `node scripts/console-screenshots.mjs`: screenshots of each console page (PNG) for docs/console.md,
// taken with playwright-core and Debian's chromium against a running stack (`npm start`, or any api).
//
//   CONSOLE_URL   the api's origin               (default http://127.0.0.1:$API_PORT, 3001)
//   ADMIN_KEY     an admin key (Basic password)  (default the first of ADMIN_API_KEYS)
//   INGEST_URL    ingest's origin, for --seed    (default http://127.0.0.1:$INGEST_PORT, 3000)
//   OUT_DIR       where the PNGs go              (default docs/console)
//
// --seed first sends a demo user's purchases and one event that parks (a RevenueCat subscription
// event while REVENUECAT_API_KEY is unset), through ingest with REVENUECAT_WEBHOOK_AUTH, and requeues
// it from the console, so every page has something on it. When the stack's worker was started with
// APP_WEBHOOK_URL pointing at a free local port (and APP_WEBHOOK_SECRETS, a short
// APP_WEBHOOK_RETRY_SCHEDULE_MS), the purchases' messages fail for want of a receiver; the script
// then starts one on that port (verifying with standardwebhooks, answering 204) and redelivers the
// first message with the console's button.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadEnvironment, root } from './bootstrap.mjs';

// playwright-core and standardwebhooks are dependencies of the test package (the browser tests use them).
const fromTest = createRequire(path.join(root, 'test', 'package.json'));
const { chromium } = fromTest('playwright-core');
const { Webhook } = fromTest('standardwebhooks');

loadEnvironment();
const env = process.env;
const consoleUrl = env.CONSOLE_URL ?? `http://127.0.0.1:${env.API_PORT ?? 3001}`;
const ingestUrl = env.INGEST_URL ?? `http://127.0.0.1:${env.INGEST_PORT ?? 3000}`;
const adminKey = env.ADMIN_KEY ?? (env.ADMIN_API_KEYS ?? '').split(',')[0];
const outDir = path.resolve(root, env.OUT_DIR ?? 'docs/console');
const user = 'demo-user';
if (!adminKey) throw new Error('set ADMIN_KEY or ADMIN_API_KEYS');

const admin = (pathname) =>
  fetch(`${consoleUrl}${pathname}`, { headers: { authorization: `Bearer ${adminKey}` } }).then((r) => r.json());

async function seed() {
  const auth = (env.REVENUECAT_WEBHOOK_AUTH ?? '').split(',')[0];
  const send = (event) =>
    fetch(`${ingestUrl}/webhooks/revenuecat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({ api_version: '1.0', event }),
    });
  const base = Date.now() - 20 * 86_400_000;
  for (const [day, product] of [
    [0, 'tokens.100'],
    [3, '2100_tokens'],
    [9, 'tokens.100'],
    [15, 'tokens.100'],
  ]) {
    const at = base + day * 86_400_000;
    await send({
      id: `demo-purchase-${day}-${Date.now()}`,
      type: 'NON_RENEWING_PURCHASE',
      app_user_id: user,
      original_app_user_id: user,
      aliases: [user, '$RCAnonymousID:6f1c0a'],
      product_id: product,
      period_type: 'NORMAL',
      purchased_at_ms: at,
      event_timestamp_ms: at,
      environment: 'SANDBOX',
      store: 'APP_STORE',
      transaction_id: String(at),
      price: 4.99,
      currency: 'USD',
    });
  }
  await send({
    id: `demo-renewal-${Date.now()}`,
    type: 'RENEWAL',
    app_user_id: user,
    original_app_user_id: user,
    aliases: [user],
    product_id: 'com.revenuecat.myapp.monthly',
    period_type: 'NORMAL',
    purchased_at_ms: Date.now(),
    expiration_at_ms: Date.now() + 30 * 86_400_000,
    event_timestamp_ms: Date.now(),
    environment: 'SANDBOX',
    store: 'APP_STORE',
    transaction_id: String(Date.now()),
  });
  for (let i = 0; i < 100; i++) {
    const parked = await admin('/admin/events?status=failed&limit=1');
    if (parked.events?.length) return;
    await sleep(200);
  }
}

/** The demo user's failed messages, once every one of them has failed (APP_WEBHOOK_URL set, nobody listening). */
async function failedMessages() {
  for (let i = 0; i < 150; i++) {
    const { messages = [] } = await admin(`/admin/app-webhooks/messages?userId=${user}`);
    if (messages.length > 0 && messages.every((message) => message.status === 'failed')) return messages;
    await sleep(200);
  }
  return [];
}

/** The app's receiver on APP_WEBHOOK_URL's port: verifies each delivery with every secret, answers 204. */
async function startReceiver() {
  const url = new URL(env.APP_WEBHOOK_URL);
  const verifiers = (env.APP_WEBHOOK_SECRETS ?? '').split(',').map((secret) => new Webhook(secret.trim()));
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        for (const verifier of verifiers) verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end('bad signature');
      }
    });
  });
  await new Promise((resolve) => server.listen(Number(url.port), url.hostname, resolve));
  return server;
}

if (process.argv.includes('--seed')) await seed();
const seedMessages = process.argv.includes('--seed') && env.APP_WEBHOOK_URL;
const failed = seedMessages ? await failedMessages() : [];
const receiver = failed.length > 0 ? await startReceiver() : undefined;
mkdirSync(outDir, { recursive: true });
const userDataDir = mkdtempSync(path.join(tmpdir(), 'tally-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  httpCredentials: { username: 'support', password: adminKey },
  viewport: { width: 1366, height: 860 },
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const shot = async (name, pathname, action) => {
    await page.goto(`${consoleUrl}${pathname}`);
    if (action) await action();
    await page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
    process.stdout.write(`${name}.png  ${pathname}\n`);
  };
  const [parked] = (await admin('/admin/events?status=failed&limit=1')).events ?? [];
  if (parked && process.argv.includes('--seed')) {
    await page.goto(`${consoleUrl}/admin/console/events/${parked.id}`);
    await page.getByRole('button', { name: `Requeue #${parked.id}` }).click();
    await page.waitForLoadState();
    await sleep(1000);
  }
  const [redelivered] = failed;
  if (redelivered) {
    await page.goto(`${consoleUrl}/admin/console/app-webhooks/${redelivered.id}`);
    await page.getByRole('button', { name: `Redeliver ${redelivered.id}` }).click();
    await page.waitForLoadState();
    for (let i = 0; i < 50; i++) {
      if ((await admin(`/admin/app-webhooks/messages/${redelivered.id}`)).status === 'delivered') break;
      await sleep(200);
    }
  }
  const [message] = (await admin('/admin/app-webhooks/messages?limit=1')).messages ?? [];
  await shot('overview', '/admin/console');
  await shot('user', `/admin/console/users/${user}`);
  await shot('inbox', '/admin/console/events');
  if (parked) await shot('event', `/admin/console/events/${parked.id}`);
  await shot('messages', '/admin/console/app-webhooks');
  if (redelivered ?? message) await shot('message', `/admin/console/app-webhooks/${(redelivered ?? message).id}`);
  await shot('search', '/admin/console/search?q=pi_3QxUnknown');
  await shot('audit', '/admin/console/audit');
  await shot('reconcile', '/admin/console/reconcile');
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
  if (receiver) await new Promise((resolve) => receiver.close(resolve));
}
