// `node bench/engine-cpu.mjs [checkout] [flow] [events] [users]` after a build: the worker's CPU
// per event in billing-core's processInboxEvents alone, in this process (no BullMQ, no Redis):
// a backlog of `events` token packs (`flow` revenuecat or stripe, default revenuecat; 4000 over
// 2000 users) recorded on a fresh database of the server (DATABASE_URL, default the local one),
// then drained by 8 concurrent lanes as the worker's concurrency does; prints the process's
// user and system CPU per event after the first 500. `checkout` (default this one) is the root of
// a built checkout, so two builds can be compared one after the other on the same machine
// (A/B of the engine's own CPU, which a loaded machine's drain rates cannot resolve).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { revenueCatTokenPackEvents } from './lib/revenuecat-events.mjs';
import { stripeTokenPackEvent } from './lib/stripe-events.mjs';
import { root as here } from './lib/workspace.mjs';

const [checkout = here, flow = 'revenuecat', eventsArg = '4000', usersArg = '2000'] = process.argv.slice(2);
const require = createRequire(path.resolve(checkout, 'packages/billing-core/package.json'));
const core = require(path.resolve(checkout, 'packages/billing-core/dist/index.js'));
// The Postgres plumbing (createDb, migrate) is platform's; a checkout from before it moved there
// has it in billing-core, whose migrate() then needs no folder.
const platformDbPath = path.resolve(checkout, 'packages/platform/dist/db/index.js');
const platformDb = existsSync(platformDbPath) ? require(platformDbPath) : core;
const { sql } = require('kysely');
const pg = require('pg');
const events = Number(eventsArg);
const users = Number(usersArg);
const serverUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const name = `tally_engine_cpu_${process.pid}`;
const admin = new pg.Client({ connectionString: serverUrl.href });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl.href);
url.pathname = `/${name}`;
try {
  await platformDb.migrate(url.href, core.migrationsDir);
  const database = platformDb.createDb({ connectionString: url.href, maxConnections: 12, preparedStatements: true });
  const { db } = database;
  const tag = `${process.pid}`;
  const drafts =
    flow === 'revenuecat'
      ? revenueCatTokenPackEvents({ tag, count: events, users }).map(({ body }) =>
          core.toRevenueCatInboxDraftFromBody(body),
        )
      : Array.from({ length: events }, (_, i) =>
          core.toStripeInboxDraftFromBody(
            stripeTokenPackEvent({
              eventId: `evt_${tag}_${i}`,
              paymentIntentId: `pi_${tag}_${i}`,
              userId: `bench-user-${i % users}`,
            }),
          ),
        );
  for (let i = 0; i < drafts.length; i += 500) await core.recordInboxEvents(db, drafts.slice(i, i + 500));
  const ids = (await sql`SELECT id FROM inbox_events ORDER BY id`.execute(db)).rows.map((row) => row.id);
  const handlers = core.createInboxHandlers({
    catalog: core.loadCatalog(core.exampleCatalogPath),
    ports: {},
    policy: { paymentEnvironments: new Set(['production', 'sandbox']), stripeConnectAccounts: new Set() },
    verifyRevenueCatPurchases: false,
  });
  const deps = {
    db,
    handlers,
    outbox: { lowBalanceThreshold: undefined, handOff: undefined },
    maxAttempts: 5,
    backoff: { baseDelayMs: 1000, maxDelayMs: 60_000 },
    retryLater: { baseDelayMs: 1000, maxDelayMs: 60_000, maxWaitMs: 3_600_000 },
  };
  const warm = Math.min(500, Math.floor(ids.length / 5));
  let next = 0;
  let cpuAt;
  let wallAt;
  const kinds = {};
  const lane = async () => {
    while (next < ids.length) {
      const index = next++;
      if (index === warm) {
        cpuAt = process.cpuUsage();
        wallAt = process.hrtime.bigint();
      }
      // A first run; a checkout from before processInboxEvents has processInboxEvent(…, { firstRun }).
      const result = core.processInboxEvents
        ? (await core.processInboxEvents(deps, [ids[index]], { runsStarted: 1, stalls: 0 }))[0]
        : await core.processInboxEvent(deps, ids[index], { firstRun: true });
      kinds[result.kind] = (kinds[result.kind] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  const cpu = process.cpuUsage(cpuAt);
  const measured = ids.length - warm;
  const seconds = Number(process.hrtime.bigint() - wallAt) / 1e9;
  console.log(
    JSON.stringify({
      checkout,
      flow,
      events: measured,
      cpuUsPerEvent: Math.round((cpu.user + cpu.system) / measured),
      userUsPerEvent: Math.round(cpu.user / measured),
      systemUsPerEvent: Math.round(cpu.system / measured),
      eventsPerSecond: Math.round(measured / seconds),
      results: kinds,
    }),
  );
  await database.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
