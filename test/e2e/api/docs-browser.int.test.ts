import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { apiRoutes } from '../../../apps/api/src/routes/api-routes';
import { chromiumPath, haveChromium, launchBrowser, runBrowserTest } from '../../support/browser';
import { suiteStack } from '../../support/suite';

const outputDir = path.join(__dirname, '..', '..', '..', 'test-output');

if (!runBrowserTest) {
  process.stderr.write(
    `[docs test] ${chromiumPath} is missing: the browser test is skipped (apt-get install chromium)\n`,
  );
}

describe('/docs, the API reference, in a real browser', () => {
  const stack = suiteStack();

  (runBrowserTest ? it : it.skip)(
    'renders every route and the app webhooks from /openapi.json, asking nothing of another origin',
    async () => {
      expect({ chromium: chromiumPath, installed: haveChromium }).toEqual({ chromium: chromiumPath, installed: true });
      const origin = `http://127.0.0.1:${stack.api.port}`;
      const browser = await launchBrowser({ username: 'nobody', password: 'none' });
      const requested: string[] = [];
      const problems: string[] = [];
      try {
        const { page } = browser;
        page.on('request', (request) => requested.push(request.url()));
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });
        page.on('pageerror', (error) => problems.push(String(error)));
        const answer = await page.goto(`${origin}/docs`);
        expect(answer?.status()).toBe(200);
        expect(answer?.headers()['content-security-policy']).toContain("default-src 'none'");
        await page
          .getByRole('heading', { name: "The user's balance and its lots" })
          .waitFor({ timeout: 20_000 })
          .catch((error) => {
            throw new Error(`${String(error)}\nproblems: ${problems.join('\n')}\nrequested: ${requested.join('\n')}`);
          });
        // The title as Redoc shows it, with the version beside it: "Tally API (v1)", not "Tally API (1)".
        expect(await page.locator('.api-info h1').first().textContent()).toBe('Tally API (v1)');
        // biome-ignore lint/performance/useDomNodeTextContent: playwright's innerText, the text as rendered (what a reader sees)
        const text = await page.locator('body').innerText();
        for (const route of apiRoutes) expect([route.path, text.includes(route.summary)]).toEqual([route.path, true]);
        for (const type of ['wallet.credited', 'subscription.updated', 'studio.request.failed']) {
          expect(text).toContain(type);
        }
        mkdirSync(outputDir, { recursive: true });
        await page.screenshot({ path: path.join(outputDir, 'docs.png') });

        expect(requested).toContain(`${origin}/openapi.json`);
        expect(requested).toContain(`${origin}/docs/redoc.standalone.js`);
        const elsewhere = requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
        expect(elsewhere).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
