import { randomBytes } from 'node:crypto';
import { type DB, migrationsDir } from '@tally/billing-core';
import {
  createTestDatabase,
  signal,
  type TestDatabase,
  testRedisUrl,
  uniqueQueuePrefix,
} from '@tally/billing-core/testing';
import { claimLease, createDb, type Database, migrate, renewLease, runWithLease } from '@tally/platform';
import { testDatabaseServerUrl } from '@tally/platform/testing';
import { sql } from 'kysely';
import pg from 'pg';
import { RunningProcess, runCli } from '../../support/built-process';
import { FakeStripe } from '../../support/fakes/fake-stripe';
import { PgBouncer } from '../../support/pgbouncer';
import { freePort } from '../../support/ports';
import { removeTestQueue } from '../../support/remove-test-queue';
import { eventually, signStripe, stripeSecret } from '../../support/stack';
import { stripeEventBody, stripeId, stripePackIntent } from '../../support/stripe-events';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Tally behind a real PgBouncer in transaction mode, five server connections per database while
 * the clients' pools add up to far more: what an operator scaling past one box runs. (The stack
 * suites run through one too: jest.pgbouncer.config.js.)
 */
describe('behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let database: TestDatabase;
  /** The test database through the pooler. */
  let pooledUrl: string;

  beforeAll(async () => {
    bouncer = await PgBouncer.start({ upstreamUrl: testDatabaseServerUrl(), poolSize: 5 });
    database = await createTestDatabase();
    pooledUrl = bouncer.urlFor(database.directUrl);
  });
  afterAll(async () => {
    await database?.drop();
    await bouncer?.stop();
  });

  describe('the lease that keeps scheduled work to one replica', () => {
    let replicas: Database<DB>[];
    beforeAll(() => {
      replicas = [0, 1].map(() => createDb<DB>({ connectionString: pooledUrl, maxConnections: 3 }));
    });
    afterAll(() => Promise.all(replicas.map((replica) => replica.close())));
    const name = () => `test-lease-${randomBytes(4).toString('hex')}`;

    it('is granted to exactly one of many claims made at once by two replicas', async () => {
      const lease = name();
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          claimLease(replicas[n % 2]?.db ?? database.db, lease, `holder-${n}`, 60_000),
        ),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      const rows = await database.db.selectFrom('leases').select('holder').where('name', '=', lease).execute();
      expect(rows).toEqual([{ holder: `holder-${claims.indexOf(true)}` }]);
    });

    it('is held by one replica while its work runs (renewed past the ttl), released when it ends, and taken over after a dead holder expires', async () => {
      const [a, b] = replicas as [Database<DB>, Database<DB>];
      const lease = name();
      const started = signal();
      const gate = signal();
      const ttlMs = 1_000;
      const aRun = runWithLease(a.db, { name: lease, ttlMs, renewEveryMs: 100 }, async () => {
        started.resolve();
        await gate.promise;
        return 'a';
      });
      try {
        await started.promise;
        expect(await runWithLease(b.db, { name: lease, ttlMs }, async () => 'b')).toEqual({ kind: 'busy' });
        // Longer than the ttl: A's renewals keep it, B is still turned away.
        await sleep(2.5 * ttlMs);
        expect(await runWithLease(b.db, { name: lease, ttlMs }, async () => 'b')).toEqual({ kind: 'busy' });
      } finally {
        gate.resolve();
      }
      expect(await aRun).toEqual({ kind: 'ran', value: 'a', lost: false });
      // Released: B runs at once, without waiting for an expiry.
      expect(await runWithLease(b.db, { name: lease, ttlMs }, async () => 'b')).toEqual({
        kind: 'ran',
        value: 'b',
        lost: false,
      });

      // A holder that dies: claimed, never renewed or released.
      expect(await claimLease(a.db, lease, 'dead-replica', ttlMs)).toBe(true);
      const unexpired = await sql<{ unexpired: boolean }>`
        SELECT expires_at > now() AS unexpired FROM leases WHERE name = ${lease}`.execute(database.db);
      const busyWhileUnexpired = await runWithLease(b.db, { name: lease, ttlMs }, async () => 'b');
      if (unexpired.rows[0]?.unexpired) expect(busyWhileUnexpired).toEqual({ kind: 'busy' });
      const takenOver = await eventually(
        'the dead holder’s lease to expire and B to take it',
        async () => {
          const result = await runWithLease(b.db, { name: lease, ttlMs }, async () => 'b');
          return result.kind === 'ran' ? result : undefined;
        },
        15_000,
      );
      expect(takenOver).toEqual({ kind: 'ran', value: 'b', lost: false });
      // The dead holder, were it to wake, finds the lease no longer its own.
      expect(await renewLease(a.db, lease, 'dead-replica', ttlMs)).toBe(false);
    });

    it('tells a holder that stalled past its expiry that another took the lease meanwhile', async () => {
      const [a, b] = replicas as [Database<DB>, Database<DB>];
      const lease = name();
      const started = signal();
      const gate = signal();
      // A does not renew within its ttl: a process that froze while working.
      const aRun = runWithLease(a.db, { name: lease, ttlMs: 300, renewEveryMs: 600_000 }, async () => {
        started.resolve();
        await gate.promise;
        return 'a';
      });
      await started.promise;
      const bRun = await eventually(
        'A’s lease to expire and B to take it',
        async () => {
          const result = await runWithLease(b.db, { name: lease, ttlMs: 60_000 }, async () => 'b');
          return result.kind === 'ran' ? result : undefined;
        },
        15_000,
      );
      gate.resolve();
      expect(bRun).toEqual({ kind: 'ran', value: 'b', lost: false });
      expect(await aRun).toEqual({ kind: 'ran', value: 'a', lost: true });
    });
  });

  it('turns prepared statements off in a pool that finds a pooler cannot route them, and its statements keep running', async () => {
    const disabled: Error[] = [];
    const pools = [0, 1].map(() =>
      createDb<DB>({
        connectionString: pooledUrl,
        maxConnections: 2,
        preparedStatements: true,
        onPreparedStatementsDisabled: (error) => disabled.push(error),
      }),
    );
    try {
      // Two client pools running the same statement at once over five server connections: a
      // statement parsed on one server connection is soon bound on another (26000) or parsed
      // again where another client parsed it (42P05). Outside a transaction each is retried.
      // Left alone, PgBouncer may hand each client the same server every round (it reuses the
      // last released one first; one CI run went 1,000 rounds without a mismatch), so in odd
      // rounds a third client holds a server in an open transaction meanwhile: the one the pools'
      // statements were just prepared on is then taken, and theirs land elsewhere.
      const holder = createDb<DB>({ connectionString: pooledUrl, maxConnections: 1 });
      try {
        for (let round = 0; round < 200 && pools.some((pool) => pool.preparedStatements()); round += 1) {
          const run = () =>
            Promise.all(
              pools.flatMap((pool) =>
                [0, 1].map((n) => sql<{ n: number }>`SELECT ${round * 2 + n}::int AS n`.execute(pool.db)),
              ),
            );
          const answers =
            round % 2 === 1
              ? await holder.db.transaction().execute(async (trx) => {
                  await sql`SELECT 1`.execute(trx);
                  return run();
                })
              : await run();
          expect(answers.map(({ rows }) => rows[0]?.n)).toEqual([0, 1, 0, 1].map((n) => round * 2 + n));
        }
      } finally {
        await holder.close();
      }
      expect(pools.map((pool) => pool.preparedStatements())).toEqual([false, false]);
      expect(disabled).toHaveLength(2);
      expect(disabled.map((error) => (error as Error & { code?: string }).code)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^(26000|42P05)$/)]),
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
    }
  });

  it('migrates through the pooler without leaving a lock on any server connection', async () => {
    const name = `tally_test_pgb_migrate_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: testDatabaseServerUrl() });
    admin.on('error', () => undefined);
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      const direct = new URL(testDatabaseServerUrl());
      direct.pathname = `/${name}`;
      const pooled = bouncer.urlFor(direct.toString());
      const [first, second] = await Promise.all([migrate(pooled, migrationsDir), migrate(pooled, migrationsDir)]);
      const applied = [...first.applied, ...second.applied];
      expect(applied).toContain('0016_leases');
      expect(new Set(applied).size).toBe(applied.length);
      expect((await migrate(pooled, migrationsDir)).applied).toEqual([]);
      // No advisory lock is held in that database: none stranded on a pooled server connection.
      const { rows } = await admin.query(
        `SELECT l.objid::bigint AS key FROM pg_locks l JOIN pg_database d ON d.oid = l.database
          WHERE d.datname = $1 AND l.locktype = 'advisory'`,
        [name],
      );
      expect(rows).toEqual([]);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).catch(() => undefined);
      await admin.end().catch(() => undefined);
    }
  });

  describe('four worker processes and two ingest processes sharing one pooler', () => {
    const queuePrefix = uniqueQueuePrefix();
    let fake: FakeStripe;
    let processes: RunningProcess[] = [];
    let ingestPorts: number[] = [];

    beforeAll(async () => {
      fake = await FakeStripe.start();
      const env = {
        DATABASE_URL: pooledUrl,
        // As docs/scaling.md says to run behind PgBouncer 1.18 in transaction mode.
        DATABASE_PREPARED_STATEMENTS: 'false',
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: queuePrefix,
        LOG_LEVEL: 'info',
        SHUTDOWN_TIMEOUT_MS: '5000',
      };
      const ingests = [0, 1].map(
        () => new RunningProcess('ingest', { ...env, INGEST_PORT: '0', STRIPE_WEBHOOK_SECRETS: stripeSecret }),
      );
      const workers = [0, 1, 2, 3].map(
        () =>
          new RunningProcess('worker', {
            ...env,
            WORKER_METRICS_PORT: '0',
            WORKER_ROLES: 'inbox,relay',
            PAYMENT_ENVIRONMENTS: 'production,sandbox',
            STRIPE_SECRET_KEY: 'sk_test_fake',
            STRIPE_API_BASE_URL: fake.baseUrl,
          }),
      );
      processes = [...ingests, ...workers];
      ingestPorts = await Promise.all(
        ingests.map(async (ingest) => Number((await ingest.waitForLog('ingest listening')).port)),
      );
      await Promise.all(workers.map((worker) => worker.waitForLog('worker started')));
    });
    afterAll(async () => {
      await Promise.all(processes.map((child) => child.stop()));
      await removeTestQueue(queuePrefix);
      await fake?.stop();
    });

    /** Posts a signed Stripe event to one ingest; the HTTP status. */
    const post = async (port: number, body: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/stripe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(body) },
        body,
      });
      await response.text();
      return response.status;
    };
    /** Token pack purchases: `perUser` events for each of `users` users, as signed bodies. */
    const purchases = (users: number, perUser: number) => {
      const batch = randomBytes(3).toString('hex');
      return Array.from({ length: users * perUser }, (_, n) => {
        const userId = `pgb-user-${batch}-${n % users}`;
        const paymentIntentId = stripeId('pi');
        const body = stripeEventBody(
          'payment_intent.succeeded',
          stripePackIntent({ id: paymentIntentId, userId, customer: stripeId('cus') }),
        );
        return { userId, paymentIntentId, eventId: JSON.parse(body).id as string, body };
      });
    };
    const expectCreditedOnce = async (events: ReturnType<typeof purchases>) => {
      const ids = events.map((event) => event.eventId);
      await eventually(
        `${ids.length} events to be processed`,
        async () => {
          const row = await database.db
            .selectFrom('inbox_events')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('provider_event_id', 'in', ids)
            .where('status', '=', 'processed')
            .executeTakeFirstOrThrow();
          return Number(row.count) === ids.length;
        },
        90_000,
      );
      const inbox = await database.db
        .selectFrom('inbox_events')
        .select(['provider_event_id', 'status', 'outcome_code'])
        .where('provider_event_id', 'in', ids)
        .execute();
      expect(inbox).toHaveLength(ids.length);
      expect(new Set(inbox.map((row) => `${row.status}/${row.outcome_code}`))).toEqual(new Set(['processed/credited']));
      const ledger = await database.db
        .selectFrom('ledger_entries')
        .select(['reference', 'user_id', 'amount'])
        .where(
          'reference',
          'in',
          events.map((event) => `stripe:payment:${event.paymentIntentId}`),
        )
        .execute();
      expect(ledger.sort((x, y) => x.reference.localeCompare(y.reference))).toEqual(
        events
          .map((event) => ({
            reference: `stripe:payment:${event.paymentIntentId}`,
            user_id: event.userId,
            amount: 100,
          }))
          .sort((x, y) => x.reference.localeCompare(y.reference)),
      );
      const users = [...new Set(events.map((event) => event.userId))];
      const wallets = await database.db
        .selectFrom('wallets')
        .select(['user_id', 'balance'])
        .where('user_id', 'in', users)
        .execute();
      const expected = new Map<string, number>();
      for (const event of events) expected.set(event.userId, (expected.get(event.userId) ?? 0) + 100);
      expect(new Map(wallets.map((wallet) => [wallet.user_id, wallet.balance]))).toEqual(expected);
    };

    it('credits every event of a burst exactly once, each delivered to both ingests at once, through five server connections', async () => {
      const events = purchases(40, 5);
      let maxServers = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const servers = await bouncer.show('SERVERS');
          maxServers = Math.max(maxServers, servers.filter((server) => server.database === database.name).length);
          await sleep(50);
        }
      })();
      const answers = await Promise.all(events.flatMap((event) => ingestPorts.map((port) => post(port, event.body))));
      expect(new Set(answers)).toEqual(new Set([200]));
      await expectCreditedOnce(events);
      sampling = false;
      await sampler;
      expect(maxServers).toBeGreaterThan(0);
      expect(maxServers).toBeLessThanOrEqual(bouncer.poolSize);
      for (const child of processes)
        expect({ app: child.app, exit: child.exit }).toEqual({ app: child.app, exit: undefined });
    });

    it('applies a new migration through DATABASE_MIGRATION_URL, past the pooler, while the services keep crediting through it', async () => {
      // Play a release that adds 0016: its table and its record are gone until migrate runs.
      await sql`DROP TABLE leases`.execute(database.db);
      await sql`DELETE FROM schema_migrations WHERE version = '0016_leases'`.execute(database.db);
      const during = purchases(10, 2);
      const sending = Promise.all(during.map((event, n) => post(ingestPorts[n % 2] ?? 0, event.body)));
      // DATABASE_URL names a port nothing listens on: migrate must not use it.
      const dead = `postgres://postgres@127.0.0.1:${await freePort()}/${database.name}`;
      const result = await runCli(['migrate', '--no-create-database'], {
        DATABASE_URL: dead,
        DATABASE_MIGRATION_URL: database.directUrl,
      });
      expect(result).toEqual({ code: 0, stdout: 'applied 0016_leases\napplied 1 migration(s)\n', stderr: '' });
      expect(new Set(await sending)).toEqual(new Set([200]));
      await expectCreditedOnce(during);
      const leases = await sql<{ n: number }>`SELECT count(*)::int AS n FROM leases`.execute(database.db);
      expect(leases.rows).toEqual([{ n: 0 }]);
    });
  });
});
