import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deliveringTo } from '../../support/app-webhook-worker';
import { repoRoot } from '../../support/built-process';
import { AppWebhookReceiver, newWebhookSecret } from '../../support/fakes/app-webhook-receiver';
import { appKey, eventually, TestStack } from '../../support/stack';

const run = promisify(execFile);
const clientDir = path.join(repoRoot, 'packages/client');
const workspaceTsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');

/** What the tarball must hold, and nothing else: the code of both formats, their types, the docs. */
const expectedFiles = [
  'LICENSE',
  'README.md',
  'dist/api-types.d.ts',
  'dist/esm/api-types.d.ts',
  'dist/esm/index.d.ts',
  'dist/esm/index.js',
  'dist/esm/package.json',
  'dist/index.d.ts',
  'dist/index.js',
  'package.json',
];

/**
 * The app's code, the same for both formats but for how it imports the package and finds where
 * the import resolved. It calls the api (a grant, the wallet, a typed error) and verifies a real
 * delivery of the worker, then a tampered copy of it. The `@ts-expect-error` lines fail the
 * type-check if the package's types were lost (an `any` accepts anything).
 */
const appBody = `
const env = process.env;
async function main(): Promise<void> {
  const tally = createTallyClient({ baseUrl: env.TALLY_URL ?? '', apiKey: env.TALLY_APP_KEY ?? '' });
  const userId = env.TALLY_USER ?? '';
  const granted = await tally.POST('/v1/users/{userId}/grants', {
    params: { path: { userId } },
    body: { amount: 11, reference: 'scratch-' + userId },
  });
  const wallet = await tally.GET('/v1/users/{userId}/wallet', { params: { path: { userId } } });
  const balance: number | undefined = wallet.data?.balance;
  const none = await tally.GET('/v1/users/{userId}/subscription', { params: { path: { userId } } });
  const code: string | undefined = none.error?.error.code;
  // @ts-expect-error: not a route of the api
  void tally.GET('/v1/users/{userId}/nothing-here', { params: { path: { userId } } });
  // @ts-expect-error: a grant's amount is a number
  void tally.POST('/v1/users/{userId}/grants', { params: { path: { userId } }, body: { amount: 'eleven', reference: 'x' } });

  const delivery = JSON.parse(readFileSync(env.DELIVERY_FILE ?? '', 'utf8')) as { rawBody: string; headers: Record<string, string> };
  const secrets = JSON.parse(env.WEBHOOK_SECRETS ?? '[]') as string[];
  const event: AppWebhookEvent = verifyAppWebhook(delivery.rawBody, delivery.headers, secrets);
  const credited = event.type === 'wallet.credited' ? { userId: event.data.userId, amount: event.data.amount } : null;
  let tamperedRefused = false;
  try {
    verifyAppWebhook(delivery.rawBody.replace('"amount":7', '"amount":7000'), new Headers(delivery.headers), secrets);
  } catch (error) {
    tamperedRefused = error instanceof AppWebhookVerificationError;
  }
  process.stdout.write(JSON.stringify({
    resolved: path.relative(env.APP_DIR ?? '', resolvedPath),
    grant: { status: granted.response.status, balance: granted.data?.balance },
    balance,
    code,
    verified: { type: event.type, credited },
    tamperedRefused,
  }));
}
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

const esmApp = `import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AppWebhookEvent, AppWebhookVerificationError, createTallyClient, verifyAppWebhook } from '@tally/client';
const resolvedPath = fileURLToPath(import.meta.resolve('@tally/client'));
${appBody}`;

const cjsApp = `import { readFileSync } from 'node:fs';
import path = require('node:path');
import { type AppWebhookEvent, AppWebhookVerificationError, createTallyClient, verifyAppWebhook } from '@tally/client';
const resolvedPath = require.resolve('@tally/client');
${appBody}`;

/**
 * @tally/client as an app in another repository gets it: packed by npm from a tree that was never
 * built (prepack builds it), installed from the tarball into a project outside the workspace with
 * npm (its dependencies from the registry), type-checked by the workspace's TypeScript as an ES
 * module and as a CommonJS consumer, and run against a real api, verifying a webhook the worker
 * really signed and delivered.
 */
describe('@tally/client, packed and installed into a project outside the workspace', () => {
  let stack: TestStack;
  let receiver: AppWebhookReceiver;
  const secret = newWebhookSecret();
  const scratch = mkdtempSync(path.join(tmpdir(), 'tally-client-'));
  const stage = path.join(scratch, 'clone');
  const app = path.join(scratch, 'app');
  let packed: { filename: string; files: { path: string }[] };

  beforeAll(async () => {
    // An unbuilt copy of the package in a workspace-shaped tree (no dist/): what a fresh clone holds.
    const stagedClient = path.join(stage, 'packages/client');
    mkdirSync(stagedClient, { recursive: true });
    for (const entry of ['package.json', 'README.md', 'LICENSE', 'src', 'scripts']) {
      cpSync(path.join(clientDir, entry), path.join(stagedClient, entry), { recursive: true });
    }
    for (const entry of ['tsconfig.json', 'tsconfig.cjs.json', 'tsconfig.esm.json']) {
      cpSync(path.join(clientDir, entry), path.join(stagedClient, entry));
    }
    cpSync(path.join(repoRoot, 'tsconfig.base.json'), path.join(stage, 'tsconfig.base.json'));
    // The installed dependencies, as `pnpm install` leaves them in a clone.
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(stage, 'node_modules'));
    symlinkSync(path.join(clientDir, 'node_modules'), path.join(stagedClient, 'node_modules'));

    const pack = await run('npm', ['pack', '--json', '--pack-destination', scratch], {
      cwd: stagedClient,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    const json = pack.stdout.slice(pack.stdout.indexOf('\n[') + 1 || pack.stdout.indexOf('['));
    [packed] = JSON.parse(json) as [typeof packed];

    mkdirSync(path.join(app, 'src'), { recursive: true });
    writeFileSync(
      path.join(app, 'package.json'),
      `${JSON.stringify({ name: 'scratch-app', version: '1.0.0', private: true }, null, 2)}\n`,
    );
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'node16',
          moduleResolution: 'node16',
          strict: true,
          // The package's declarations are checked too, not only the app's use of them.
          skipLibCheck: false,
          types: ['node'],
          outDir: 'dist',
        },
        include: ['src'],
      }),
    );
    writeFileSync(path.join(app, 'src/esm-app.mts'), esmApp);
    writeFileSync(path.join(app, 'src/cjs-app.cts'), cjsApp);
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', path.join(scratch, packed.filename), '@types/node@20.19.43'],
      { cwd: app, env: { ...process.env, npm_config_update_notifier: 'false' } },
    );

    receiver = await AppWebhookReceiver.start([secret]);
    stack = await TestStack.start();
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('packs only what an app needs, built on pack from a tree without dist/', () => {
    expect(packed.filename).toBe('tally-client-0.1.0.tgz');
    expect(packed.files.map((file) => file.path).sort()).toEqual(expectedFiles);
    const manifest = JSON.parse(readFileSync(path.join(app, 'node_modules/@tally/client/package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@tally/client', license: 'UNLICENSED' });
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies).toEqual({ 'openapi-fetch': '0.17.0', standardwebhooks: '1.1.1' });
  });

  it('type-checks an ES module and a CommonJS consumer, and runs both against a real api, verifying a real delivery', async () => {
    const tsc = await run(process.execPath, [workspaceTsc, '-p', path.join(app, 'tsconfig.json')]).catch(
      (error: { stdout?: string }) => {
        throw new Error(`the consumers do not type-check:\n${error.stdout ?? String(error)}`);
      },
    );
    expect(tsc.stdout).toBe('');

    // A real delivery: the worker signs the grant's wallet.credited and POSTs it to the receiver.
    stack.startWorker(deliveringTo(receiver, { retryScheduleMs: [100], roles: ['relay', 'app-webhooks'] }));
    const delivered = await stack.client().POST('/v1/users/{userId}/grants', {
      params: { path: { userId: 'packed-hook' } },
      body: { amount: 7, reference: 'packed-hook' },
    });
    expect(delivered.response.status).toBe(201);
    const delivery = await eventually('the wallet.credited delivery', async () =>
      receiver.accepted.find((received) => received.body.data.userId === 'packed-hook'),
    );
    const deliveryFile = path.join(scratch, 'delivery.json');
    writeFileSync(
      deliveryFile,
      JSON.stringify({
        rawBody: delivery.rawBody,
        headers: {
          'webhook-id': delivery.webhookId,
          'webhook-timestamp': delivery.timestamp,
          'webhook-signature': delivery.signature,
        },
      }),
    );

    for (const [format, main, entry] of [
      ['esm', 'dist/esm-app.mjs', 'node_modules/@tally/client/dist/esm/index.js'],
      ['cjs', 'dist/cjs-app.cjs', 'node_modules/@tally/client/dist/index.js'],
    ] as const) {
      const { stdout } = await run(process.execPath, [path.join(app, main)], {
        cwd: app,
        env: {
          PATH: process.env.PATH ?? '',
          APP_DIR: app,
          TALLY_URL: `http://127.0.0.1:${stack.api.port}`,
          TALLY_APP_KEY: appKey,
          TALLY_USER: `packed-${format}`,
          DELIVERY_FILE: deliveryFile,
          WEBHOOK_SECRETS: JSON.stringify([newWebhookSecret(), secret]),
        },
      });
      expect({ format, ...JSON.parse(stdout) }).toEqual({
        format,
        resolved: entry,
        grant: { status: 201, balance: 11 },
        balance: 11,
        code: 'not_found',
        verified: { type: 'wallet.credited', credited: { userId: 'packed-hook', amount: 7 } },
        tamperedRefused: true,
      });
    }
  }, 120_000);
});
