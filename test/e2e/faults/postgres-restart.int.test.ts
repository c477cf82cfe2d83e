import { randomBytes } from 'node:crypto';
import { type DB, migrationsDir } from '@tally/billing-core';
import { testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { createDb, type Database, ensureDatabaseExists, migrate } from '@tally/platform';
import pg from 'pg';
import { RunningProcess } from '../../support/built-process';
import { revenueCatTokenPurchase } from '../../support/events';
import { DisposablePostgres } from '../../support/postgres-server';
import { removeTestQueue } from '../../support/remove-test-queue';
import { adminKey, appKey, eventually, revenueCatAuth } from '../../support/stack';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const users = ['pg-restart-user-0', 'pg-restart-user-1', 'pg-restart-user-2', 'pg-restart-user-3'];

async function readyzStatus(port: number): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
    await response.text();
    return response.status;
  } catch {
    return 0;
  }
}

/**
 * Plays a payment provider: POSTs one event until it is answered 200 (RevenueCat retries
 * anything else), and keeps every answer it got.
 */
async function deliverUntilAccepted(
  ingestPort: number,
  body: string,
  answers: number[],
  abort: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  const own: number[] = [];
  for (;;) {
    abort.throwIfAborted();
    try {
      const response = await fetch(`http://127.0.0.1:${ingestPort}/webhooks/revenuecat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: revenueCatAuth },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.text();
      own.push(response.status);
      answers.push(response.status);
      if (response.status === 200) return;
    } catch {
      own.push(0);
      answers.push(0);
    }
    if (Date.now() > deadline) {
      throw new Error(`an event was not accepted within 60 s; last answers: ${own.slice(-10).join(', ')}`);
    }
    await sleep(100);
  }
}

/**
 * What the database's sessions, the inbox, the senders and the processes were doing: the message
 * of a wait that timed out, so that a rare stall can be read from CI's output alone.
 */
async function describeStall(
  client: pg.Client,
  acceptedCount: number,
  answers: number[],
  ...children: RunningProcess[]
): Promise<string> {
  const sessions = await client
    .query(
      `SELECT application_name, state, wait_event_type, wait_event, xact_start IS NOT NULL AS in_transaction,
        left(query, 100) AS query
      FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
      ORDER BY application_name, state`,
    )
    .then((result) => result.rows.map((row) => JSON.stringify(row)).join('\n'))
    .catch((error: unknown) => `sessions unreadable: ${String(error)}`);
  const inbox = await client
    .query('SELECT status, count(*)::int AS count FROM inbox_events GROUP BY status ORDER BY status')
    .then((result) => JSON.stringify(result.rows))
    .catch((error: unknown) => `inbox unreadable: ${String(error)}`);
  return [
    `sessions:\n${sessions}`,
    `inbox by status: ${inbox}`,
    `accepted ${acceptedCount}; last answers: ${answers.slice(-20).join(', ')}`,
    ...children.map((child) => `${child.app}:\n${child.tail(20)}`),
  ].join('\n');
}

describe('a Postgres restart under load', () => {
  let server: DisposablePostgres;
  let database: Database<DB>;
  let processes: RunningProcess[] = [];
  const stopSenders = new AbortController();
  const queuePrefix = uniqueQueuePrefix();

  beforeAll(async () => {
    server = await DisposablePostgres.start();
  });

  afterAll(async () => {
    stopSenders.abort();
    await Promise.all(processes.map((child) => child.stop()));
    await removeTestQueue(queuePrefix);
    await database?.close();
    await server?.destroy();
  });

  it('keeps every process up, answers 503 while down, recovers readiness, and credits every accepted event exactly once', async () => {
    const url = server.url('tally');
    await ensureDatabaseExists(url);
    await migrate(url, migrationsDir);
    database = createDb<DB>({ connectionString: url, maxConnections: 2 });

    const env = {
      DATABASE_URL: url,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: queuePrefix,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '5000',
    };
    const ingest = new RunningProcess('ingest', { ...env, INGEST_PORT: '0', REVENUECAT_WEBHOOK_AUTH: revenueCatAuth });
    const api = new RunningProcess('api', { ...env, API_PORT: '0', APP_API_KEYS: appKey, ADMIN_API_KEYS: adminKey });
    const worker = new RunningProcess('worker', {
      ...env,
      WORKER_METRICS_PORT: '0',
      WORKER_CONCURRENCY: '8',
      // No RevenueCat here: packs credit from the body, as in the demo configuration.
      REVENUECAT_VERIFY_PURCHASES: 'false',
      INBOX_BACKOFF_BASE_MS: '100',
      INBOX_BACKOFF_MAX_MS: '1000',
      // The relay finds what the outage stranded: rows stored whose answer was lost, jobs that
      // ran out of attempts while the database was down.
      RELAY_INTERVAL_MS: '250',
      RELAY_STALE_AFTER_MS: '2000',
      RELAY_PROCESSING_STALE_AFTER_MS: '3000',
    });
    processes = [ingest, api, worker];
    const ports = {
      ingest: Number((await ingest.waitForLog('ingest listening')).port),
      api: Number((await api.waitForLog('api listening')).port),
      worker: Number((await worker.waitForLog('worker started')).metricsPort),
    };
    const exitReports = () =>
      processes
        .filter((child) => child.exit)
        .map((child) => `${child.app} exited ${JSON.stringify(child.exit)}:\n${child.tail()}`);
    /** Fails, with the dead process's last output, when a Tally process has exited. */
    const readyzIs = async (port: number, status: number) => {
      const reports = exitReports();
      if (reports.length > 0) throw new Error(reports.join('\n'));
      return (await readyzStatus(port)) === status;
    };

    // Providers deliver continuously, one sender per user, each retrying an event until a 200.
    const runId = randomBytes(4).toString('hex');
    const accepted: { id: string; userId: string }[] = [];
    const answers: number[] = [];
    let sending = true;
    const senders = Promise.all(
      users.map(async (userId, sender) => {
        for (let n = 0; sending; n++) {
          const id = `pg-restart-${runId}-${sender}-${n}`;
          const body = revenueCatTokenPurchase({ id, userId });
          await deliverUntilAccepted(ports.ingest, body, answers, stopSenders.signal);
          accepted.push({ id, userId });
        }
      }),
    );
    // Awaited below; until then a failed sender must not become an unhandled rejection.
    senders.catch(() => undefined);

    await eventually(
      'some events to be credited',
      async () => {
        const row = await database.db
          .selectFrom('ledger_entries')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        return Number(row.count) >= 20;
      },
      60_000,
    );

    // Hold the ledger so that worker transactions are open (wallet locked, insert waiting) at
    // the moment the server dies, rather than only idle pooled connections.
    const blocker = new pg.Client({ connectionString: url });
    blocker.on('error', () => undefined);
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE ledger_entries IN EXCLUSIVE MODE');
    // At least one worker transaction open and waiting when the server dies (more is usual: one
    // per user with an event in flight). A dead process fails this at once, with its output.
    await eventually(
      'worker transactions to wait inside the database',
      async () => {
        const reports = exitReports();
        if (reports.length > 0) throw new Error(reports.join('\n'));
        // A session waiting on a lock is inside a transaction; its other columns are not read
        // atomically with the wait (a CI stall report showed one waiting on its COMMIT as `idle`
        // with no xact_start), so the wait alone is the condition.
        const { rows } = await blocker.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE application_name = 'tally-worker' AND wait_event_type = 'Lock'`,
        );
        return (rows[0]?.waiting ?? 0) >= 1;
      },
      60_000,
    ).catch(async (error: Error) => {
      // If it ever stalls again: say what every party was doing.
      throw new Error(`${error.message}\n${await describeStall(blocker, accepted.length, answers, worker, ingest)}`);
    });

    await server.stopServer('immediate');
    await blocker.end().catch(() => undefined);
    const answersBeforeOutage = answers.length;

    // While the database is down: every process is up and says it is not ready, ingest answers
    // 503 (the provider retries) and the API answers 503 database_unavailable.
    for (const [name, port] of Object.entries(ports)) {
      await eventually(`${name} /readyz to answer 503`, () => readyzIs(port, 503), 30_000);
    }
    await eventually(
      'ingest to answer 503 to a webhook',
      async () => answers.slice(answersBeforeOutage).includes(503),
      30_000,
    );
    const wallet = await fetch(`http://127.0.0.1:${ports.api}/v1/users/${users[0]}/wallet`, {
      headers: { authorization: `Bearer ${appKey}` },
    });
    expect({ status: wallet.status, body: await wallet.json() }).toEqual({
      status: 503,
      body: { error: { code: 'database_unavailable', message: expect.any(String) } },
    });
    await sleep(1_000);
    expect(exitReports()).toEqual([]);

    await server.startServer();
    for (const [name, port] of Object.entries(ports)) {
      await eventually(`${name} /readyz to answer 200 again`, () => readyzIs(port, 200), 30_000);
    }
    const acceptedAtRestart = accepted.length;
    await eventually(
      'new events to be accepted after the restart',
      async () => accepted.length >= acceptedAtRestart + 20,
      60_000,
    );
    sending = false;
    await senders;

    // Nothing stuck: every accepted event gets processed.
    await eventually(
      'every stored event to be processed',
      async () => {
        const pending = await database.db
          .selectFrom('inbox_events')
          .select('id')
          .where('status', '!=', 'processed')
          .execute();
        return pending.length === 0;
      },
      60_000,
    );

    const acceptedIds = accepted.map((event) => event.id).sort();
    const inbox = await database.db
      .selectFrom('inbox_events')
      .select(['provider_event_id', 'status', 'outcome_code'])
      .orderBy('provider_event_id')
      .execute();
    expect(inbox.map((row) => row.provider_event_id)).toEqual(acceptedIds);

    const ledger = await database.db
      .selectFrom('ledger_entries')
      .select(['reference', 'user_id', 'amount'])
      .orderBy('reference')
      .execute();
    expect(ledger).toEqual(
      [...accepted]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((event) => ({ reference: `revenuecat:event:${event.id}`, user_id: event.userId, amount: 100 })),
    );
    const wallets = await database.db.selectFrom('wallets').select(['user_id', 'balance']).orderBy('user_id').execute();
    expect(wallets).toEqual(
      users.map((userId) => ({
        user_id: userId,
        balance: 100 * accepted.filter((event) => event.userId === userId).length,
      })),
    );

    // No Tally process exited at any point.
    expect(exitReports()).toEqual([]);
    // Each one still stops cleanly.
    for (const child of processes) {
      expect({ app: child.app, exit: await child.stop() }).toEqual({
        app: child.app,
        exit: { code: 0, signal: null },
      });
    }
    // Takes 10-20 s on an idle machine; the margin is for a loaded one.
  }, 180_000);
});
