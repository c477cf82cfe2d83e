// A worker process whose RevenueCat handler kills the process (SIGKILL, no chance to record
// anything) for events whose id starts with "poison-": an event that crashes its worker. Built
// from the compiled worker runtime exactly as apps/worker's main composes it; run by
// test/e2e/inbox/poison.int.test.ts, which restarts it each time it dies, as Kubernetes would.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInboxHandlers, exampleCatalogPath, loadCatalog } from '@tally/billing-core';
import { createDb, createLogger } from '@tally/platform';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { startWorkerRuntime } = await import(path.join(root, 'apps/worker/dist/worker-runtime.js'));
const { workerEnvSchema } = await import(path.join(root, 'apps/worker/dist/config.js'));
const { workerSettingsFrom } = await import(path.join(root, 'apps/worker/dist/settings-from-config.js'));

const database = createDb({ connectionString: process.env.DATABASE_URL, applicationName: 'tally-poison-worker' });
const real = createInboxHandlers({
  catalog: loadCatalog(exampleCatalogPath),
  ports: {},
  policy: { paymentEnvironments: new Set(['production', 'sandbox']), stripeConnectAccounts: new Set() },
  // No RevenueCat here: packs credit from the body, as in the demo configuration.
  verifyRevenueCatPurchases: false,
});
// POISON_IN=prepare (default): the kill comes from the provider-read step, outside any
// transaction (a prepare that reads its provider, so every attempt claims). POISON_IN=apply: from
// inside the apply transaction, with the real handler's prepare kept, so the event's first run is
// the one-transaction attempt.
const poisoned = (row) => row.provider_event_id.startsWith('poison-');
// POISON_NEIGHBOUR_APPLY_MS: every other event's apply takes this long (inside its transaction),
// and POISON_KILL_AFTER_MS: the poison event kills the process this long into its apply. With the
// kill sooner than a neighbour's apply, every neighbour running beside the poison event is in
// flight, its attempt claimed, when the process dies.
const neighbourApplyMs = Number(process.env.POISON_NEIGHBOUR_APPLY_MS ?? 0);
const killAfterMs = Number(process.env.POISON_KILL_AFTER_MS ?? 0);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const handlers =
  process.env.POISON_IN === 'apply'
    ? {
        ...real,
        revenuecat: {
          ...real.revenuecat,
          async apply(uow, row, prepared) {
            if (poisoned(row)) {
              if (killAfterMs > 0) await sleep(killAfterMs);
              process.kill(process.pid, 'SIGKILL');
            }
            if (neighbourApplyMs > 0) await sleep(neighbourApplyMs);
            return real.revenuecat.apply(uow, row, prepared);
          },
        },
      }
    : {
        ...real,
        revenuecat: {
          prepare: (row, ctx) => ({
            kind: 'read',
            touchesLedger: true,
            async read() {
              if (poisoned(row)) process.kill(process.pid, 'SIGKILL');
              const preparation = real.revenuecat.prepare(row, ctx);
              return preparation.kind === 'ready' ? preparation.prepared : preparation.read();
            },
          }),
          apply: real.revenuecat.apply,
        },
      };
// Settings as main takes them (INBOX_MAX_ATTEMPTS from the environment), with a quick lock and relay.
const settings = workerSettingsFrom(workerEnvSchema.parse(process.env));
startWorkerRuntime({
  db: database.db,
  handlers,
  logger: createLogger({ name: 'poison-worker', level: 'silent' }),
  redisUrl: process.env.REDIS_URL,
  queuePrefix: process.env.QUEUE_PREFIX,
  roles: ['inbox', 'relay'],
  settings: {
    ...settings,
    lockDurationMs: 500,
    drainTimeoutMs: 2_000,
    // POISON_CONCURRENCY: more jobs at once, so that first runs coalesce into batches.
    inbox: { ...settings.inbox, concurrency: Number(process.env.POISON_CONCURRENCY ?? 2) },
    relay: { intervalMs: 200, staleAfterMs: 500, processingStaleAfterMs: 500, batchSize: 50 },
  },
  ports: { aiStudio: undefined, stripe: undefined, mailer: undefined },
});
process.stdout.write('poison worker started\n');
