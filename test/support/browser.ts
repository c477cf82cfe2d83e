import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's chromium, which playwright-core drives (it downloads no browser of its own). */
export const chromiumPath = '/usr/bin/chromium';
export const haveChromium = existsSync(chromiumPath);
/**
 * .ci/run installs chromium: under CI=true a missing browser fails the browser tests instead of
 * skipping them (the rule of docs/testing.md), elsewhere they are skipped and say so.
 */
export const runBrowserTest = haveChromium || process.env.CI === 'true';

/**
 * A headless chromium with a fresh profile in a temporary directory and HTTP Basic credentials,
 * on a laptop-sized viewport. `close()` ends the browser and removes the profile.
 */
export async function launchBrowser(credentials: { username: string; password: string }): Promise<{
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}> {
  if (!haveChromium) throw new Error(`${chromiumPath} is missing (apt-get install chromium)`);
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'tally-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    httpCredentials: credentials,
    viewport: { width: 1366, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
