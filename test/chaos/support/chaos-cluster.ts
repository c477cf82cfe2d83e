import { type DB, migrationsDir } from '@tally/billing-core';
import { createDb, type Database, ensureDatabaseExists, migrate } from '@tally/platform';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { RunningProcess, type TallyApp } from '../../support/built-process';
import { AppWebhookReceiver } from '../../support/fakes/app-webhook-receiver';
import { FakeAiStudio } from '../../support/fakes/fake-ai-studio';
import { FakeRevenueCat, fakeRevenueCatApiKey } from '../../support/fakes/fake-revenuecat';
import { FakeStripe } from '../../support/fakes/fake-stripe';
import { PgBouncer } from '../../support/pgbouncer';
import { freePort } from '../../support/ports';
import { DisposablePostgres } from '../../support/postgres-server';
import { DisposableRedis } from '../../support/redis-server';
import { KeyedRequestLog } from './keyed-requests';
import { type Pod, PodNetwork } from './network';

export const chaosStripeSecret = 'whsec_chaos_current_secret';
export const chaosRevenueCatAuth = 'Bearer rc_chaos_webhook_auth';
export const chaosAppKey = 'app_chaos_key';
export const chaosAdminKey = 'admin_chaos_key';
export const chaosStripeApiKey = 'sk_test_chaos_stripe';
export const chaosAiKey = 'ai_chaos_key';
/** APP_WEBHOOK_SECRETS of the chaos workers: two, as mid-rotation (every delivery signed by both). */
export const chaosAppWebhookSecrets = [
  `whsec_${Buffer.from('chaos app webhook secret, the old one').toString('base64')}`,
  `whsec_${Buffer.from('chaos app webhook secret, the new one').toString('base64')}`,
];
/** Every secret the processes hold: none may appear in any log line. */
export const chaosSecrets = [
  chaosStripeSecret,
  chaosRevenueCatAuth.replace('Bearer ', ''),
  chaosAppKey,
  chaosAdminKey,
  chaosStripeApiKey,
  chaosAiKey,
  fakeRevenueCatApiKey,
  ...chaosAppWebhookSecrets,
  ...chaosAppWebhookSecrets.map((secret) => secret.replace('whsec_', '')),
];
export const shutdownTimeoutMs = 5_000;
/** HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS of every process of the chaos cluster. */
export const chaosHttpHeadersTimeoutMs = 5_000;
export const chaosHttpRequestTimeoutMs = 10_000;
/**
 * DATABASE_QUERY_TIMEOUT_MS of every chaos process: a statement over a cut link fails (and its
 * connection is dropped) after 10 s. Not lower: a frozen worker (paused-worker-lost-lock) holds a
 * user's advisory lock up to 9 s, and the statements waiting for it are not lost.
 */
export const chaosQueryTimeoutMs = 10_000;
/**
 * API_ANSWER_DEADLINE_MS of the chaos api: a call the database does not answer (its link cut) is
 * answered 503 at 4 s, well within the app's 10 s client timeout (money-paths, docs/reliability.md),
 * whatever its statement and connect timeouts.
 */
export const chaosApiAnswerDeadlineMs = 4_000;
/** The app's client timeout in `apiRequest`: a call not answered by then counts as no answer (status 0). */
export const chaosApiClientTimeoutMs = 10_000;
/** INGEST_ANSWER_DEADLINE_MS of the chaos ingests: an event not stored within 4 s is answered 503. */
export const chaosIngestAnswerDeadlineMs = 4_000;
/** WORKER_LOCK_DURATION_MS of the chaos workers; the inbox worker's stalled check runs as often. */
export const chaosWorkerLockMs = Number(process.env.CHAOS_WORKER_LOCK_MS ?? 2_000);
/** IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS of the chaos api (above its 2 s provider timeouts). */
export const chaosIdempotencyLockMs = 3_000;
/**
 * APP_WEBHOOK_TIMEOUT_MS of the chaos workers (below RELAY_PROCESSING_STALE_AFTER_MS, 4 s). Not
 * lower: the receiver shares the test process with the provider simulator, and on a loaded
 * machine 1 s answers came too late during a duplicate storm (a run failed four messages so).
 */
export const chaosAppWebhookTimeoutMs = 2_000;
/**
 * APP_WEBHOOK_RETRY_SCHEDULE_MS of the chaos workers: ten attempts over about 10.5 s (plus each
 * attempt's own time, up to the timeout), then `failed`. A receiver down for less never fails one.
 */
export const chaosAppWebhookRetryScheduleMs = [100, 200, 400, 800, 1_000, 2_000, 2_000, 2_000, 2_000];
/** WALLET_LOW_BALANCE_THRESHOLD of the chaos api and workers: refunds and generations cross it. */
export const chaosLowBalanceThreshold = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One Tally process under a supervisor: it keeps its port across restarts (like a pod behind a
 * service), is restarted after it dies unless the supervisor is told to stop, and keeps the
 * output of every incarnation for the log checks.
 */
export class SupervisedProcess {
  current: RunningProcess | undefined;
  /** Output of incarnations that have exited. */
  pastOutput = '';
  restarts = 0;
  crashes: { code: number | null; signal: NodeJS.Signals | null }[] = [];
  private supervising = true;
  /** Stopped on purpose for a while (`suspend`): its exit is not restarted until `restart`. */
  private suspended = false;
  private readyIncarnation: RunningProcess | undefined;
  /** The incarnation we SIGSTOPped and have not SIGCONTed yet. */
  private pausedIncarnation: RunningProcess | undefined;

  constructor(
    readonly name: string,
    readonly app: TallyApp,
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly readyLog: string,
    /** The network namespace it runs in (a cluster with `network`), else the host's. */
    readonly pod?: Pod,
  ) {
    if (pod) this.env = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, pod.rewrite(value)]));
  }

  /** Where the test reaches its HTTP port: the pod's address, or 127.0.0.1. */
  get host(): string {
    return this.pod?.address ?? '127.0.0.1';
  }

  /** Starts an incarnation and resolves once it logged that it is ready. */
  async start(): Promise<void> {
    this.spawn();
    await this.ready();
  }

  private spawn(): void {
    const pod = this.pod;
    const child = new RunningProcess(
      this.app,
      this.env,
      pod ? { wrap: (command, args) => pod.wrap(command, args) } : {},
    );
    this.current = child;
    // A process killed before it was ready just never becomes ready; the restart takes over.
    child.waitForLog(this.readyLog, 60_000).then(
      () => {
        this.readyIncarnation = child;
      },
      () => undefined,
    );
    void child.exited.then((exit) => {
      this.pastOutput += child.output;
      if (this.pausedIncarnation === child) this.pausedIncarnation = undefined;
      if (exit.signal !== 'SIGKILL' && exit.code !== 0) this.crashes.push(exit);
      if (this.supervising && !this.suspended && this.current === child) {
        this.restarts += 1;
        // A supervisor's restart delay; the port is freed by then.
        setTimeout(() => {
          if (this.supervising && !this.suspended && this.current === child) this.spawn();
        }, 200);
      }
    });
  }

  /** Waits until the current incarnation is ready (after a restart, too). */
  async ready(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const child = this.current;
      if (child && !child.exit && this.readyIncarnation === child) return;
      if (Date.now() > deadline) throw new Error(`${this.name} never became ready:\n${child?.tail() ?? ''}`);
      await sleep(50);
    }
  }

  /**
   * SIGSTOP: the process is frozen as it is (mid-job, mid-transaction, holding its row locks and
   * BullMQ locks, which it can no longer renew) but alive. A stopped child emits no 'exit', so the
   * supervisor neither restarts it nor counts it; `resume` lets it carry on where it stopped.
   */
  pause(): void {
    const child = this.current;
    if (!child || child.exit) throw new Error(`${this.name} is not running`);
    child.signal('SIGSTOP');
    this.pausedIncarnation = child;
  }

  /** SIGCONT for a paused incarnation (nothing when none is paused). */
  resume(): void {
    const child = this.pausedIncarnation;
    this.pausedIncarnation = undefined;
    if (child && !child.exit) child.signal('SIGCONT');
  }

  /** The current incarnation is running and has logged that it is ready. */
  get isReady(): boolean {
    const child = this.current;
    return child !== undefined && !child.exit && this.readyIncarnation === child;
  }

  get paused(): boolean {
    return this.pausedIncarnation !== undefined && this.pausedIncarnation === this.current;
  }

  /** kill -9: the supervisor restarts it. */
  kill9(): void {
    this.current?.signal('SIGKILL');
  }

  /** SIGTERM and wait: how the process exited and how long it took; the supervisor restarts it. */
  async terminate(): Promise<{ exit: { code: number | null; signal: NodeJS.Signals | null }; ms: number }> {
    const child = this.current;
    if (!child) throw new Error(`${this.name} is not running`);
    // A stopped process would hold the SIGTERM until it is continued: the time it stays stopped
    // is not shutdown time.
    this.resume();
    const started = Date.now();
    child.signal('SIGTERM');
    const exit = await child.exited;
    return { exit, ms: Date.now() - started };
  }

  /**
   * SIGTERM and wait, like `terminate`, but the supervisor leaves it stopped (a scaled-down
   * deployment) until `restart`. An exit other than 0 still counts as a crash.
   */
  async suspend(): Promise<{ exit: { code: number | null; signal: NodeJS.Signals | null }; ms: number }> {
    this.suspended = true;
    const child = this.current;
    if (!child || child.exit) return { exit: child?.exit ?? { code: 0, signal: null }, ms: 0 };
    return this.terminate();
  }

  /** Starts a suspended process again and waits until it is ready. */
  async restart(): Promise<void> {
    if (!this.suspended) return this.ready();
    this.suspended = false;
    if (!this.current || this.current.exit) this.spawn();
    await this.ready();
  }

  get output(): string {
    return this.pastOutput + (this.current && !this.current.exit ? this.current.output : '');
  }

  async stop(): Promise<void> {
    this.supervising = false;
    const child = this.current;
    if (!child || child.exit) return;
    this.resume();
    const timer = setTimeout(() => child.signal('SIGKILL'), shutdownTimeoutMs + 2_000);
    await child.stop();
    clearTimeout(timer);
  }
}

export interface ChaosClusterOptions {
  ingests: number;
  workers: number;
  /** Extra worker environment (e.g. a different AI timeout). */
  workerEnv?: Record<string, string>;
  /** Ingest environment overrides (e.g. the rate limiter). */
  ingestEnv?: Record<string, string>;
  /** The services reach Postgres through a PgBouncer of the cluster's (transaction mode). */
  pooled?: boolean;
  /**
   * A second cluster streaming from the first as its synchronous standby
   * (`synchronous_standby_names = '*'`, `synchronous_commit = on`): a commit is acknowledged
   * once the standby has flushed it. Only with `pooled` (the failover repoints PgBouncer).
   */
  standby?: boolean;
  /**
   * Every process in a network namespace of its own (network.ts), so partition scenarios can cut,
   * thin and slow the links between chosen processes and Postgres, PgBouncer or Redis.
   */
  network?: boolean;
}

/**
 * Tally's real built processes (N ingest, M workers, one api) against a Postgres and a Redis of
 * the run's own (private ports, temporary directories: the suite may crash them freely), with
 * the provider APIs and the AI service played by the local fakes.
 */
export class ChaosCluster {
  /** The primary (after a failover: the promoted standby). */
  postgres!: DisposablePostgres;
  /** The synchronous standby, until a failover promotes it. */
  standby: DisposablePostgres | undefined;
  /** Primaries a failover left behind (killed; their directories removed at stop). */
  private formerPrimaries: DisposablePostgres[] = [];
  pgbouncer: PgBouncer | undefined;
  redis!: DisposableRedis;
  /** The app's webhook endpoint (APP_WEBHOOK_URL): verifies every delivery with standardwebhooks. */
  receiver!: AppWebhookReceiver;
  /** Every POST under /v1 sent through `apiRequest`, keyed or not, with its answers. */
  readonly keyed = new KeyedRequestLog();
  database!: Database<DB>;
  stripe!: FakeStripe;
  revenueCat!: FakeRevenueCat;
  ai!: FakeAiStudio;
  ingests: SupervisedProcess[] = [];
  workers: SupervisedProcess[] = [];
  api!: SupervisedProcess;
  databaseUrl = '';
  /** The processes' namespaces and veths (with `network`). */
  network: PodNetwork | undefined;
  private static networks = 0;

  static async start(options: ChaosClusterOptions): Promise<ChaosCluster> {
    const cluster = new ChaosCluster();
    try {
      await cluster.init(options);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  get db() {
    return this.database.db;
  }

  private async init(options: ChaosClusterOptions): Promise<void> {
    [this.postgres, this.redis, this.stripe, this.revenueCat, this.ai, this.receiver] = await Promise.all([
      DisposablePostgres.start(),
      DisposableRedis.start(),
      FakeStripe.start(),
      FakeRevenueCat.start(),
      FakeAiStudio.start(chaosAiKey),
      AppWebhookReceiver.start(chaosAppWebhookSecrets),
    ]);
    this.databaseUrl = this.postgres.url('tally');
    await ensureDatabaseExists(this.databaseUrl);
    await migrate(this.databaseUrl, migrationsDir);
    if (options.standby) {
      if (!options.pooled) throw new Error('a standby needs the pooler (the failover repoints it)');
      this.standby = await DisposablePostgres.standbyOf(this.postgres);
      await this.makeStandbySynchronous();
    }
    if (options.pooled) {
      // Below the upstream's max_connections (100) with room for the checker and replication; a
      // dead upstream is retried every second (default 15 s), and a client waits for a server
      // connection at most 10 s (default 120 s): past the failover, within the callers' timeouts.
      this.pgbouncer = await PgBouncer.start({
        upstreamUrl: this.postgres.url(),
        poolSize: 40,
        serverLoginRetrySeconds: 1,
        queryWaitTimeoutSeconds: 10,
      });
    }
    // The checker reads the primary directly (after a failover: the promoted one).
    this.database = this.checkerDb();
    if (options.network) {
      ChaosCluster.networks += 1;
      this.network = PodNetwork.create(`n${ChaosCluster.networks}`);
    }
    const network = this.network;
    const podFor = (name: string) => network?.addPod(name);

    const base = {
      // Every interface: in a pod the test reaches a process at the pod's address, which a
      // process on the default (127.0.0.1, the pod's own loopback) would not answer.
      HOST: '0.0.0.0',
      DATABASE_URL: this.pgbouncer ? this.pgbouncer.urlFor(this.databaseUrl) : this.databaseUrl,
      REDIS_URL: this.redis.url,
      QUEUE_PREFIX: 'chaos',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
      HTTP_HEADERS_TIMEOUT_MS: String(chaosHttpHeadersTimeoutMs),
      HTTP_REQUEST_TIMEOUT_MS: String(chaosHttpRequestTimeoutMs),
      DATABASE_QUERY_TIMEOUT_MS: String(chaosQueryTimeoutMs),
      PAYMENT_ENVIRONMENTS: 'production,sandbox',
      WALLET_LOW_BALANCE_THRESHOLD: String(chaosLowBalanceThreshold),
    };
    for (let i = 0; i < options.ingests; i += 1) {
      const port = await freePort();
      this.ingests.push(
        new SupervisedProcess(
          `ingest-${i}`,
          'ingest',
          port,
          {
            ...base,
            INGEST_PORT: String(port),
            STRIPE_WEBHOOK_SECRETS: chaosStripeSecret,
            REVENUECAT_WEBHOOK_AUTH: chaosRevenueCatAuth,
            INGEST_ANSWER_DEADLINE_MS: String(chaosIngestAnswerDeadlineMs),
            // CHAOS_INGEST_MAX_IN_FLIGHT: the ingests' admission cap (0: off), to compare a run with
            // and without it (docs/reliability.md#starvation); unset, ingest's default.
            ...(process.env.CHAOS_INGEST_MAX_IN_FLIGHT
              ? { INGEST_MAX_IN_FLIGHT: process.env.CHAOS_INGEST_MAX_IN_FLIGHT }
              : {}),
            ...options.ingestEnv,
          },
          'ingest listening',
          podFor(`ingest-${i}`),
        ),
      );
    }
    for (let i = 0; i < options.workers; i += 1) {
      const port = await freePort();
      this.workers.push(
        new SupervisedProcess(
          `worker-${i}`,
          'worker',
          port,
          {
            ...base,
            WORKER_METRICS_PORT: String(port),
            WORKER_CONCURRENCY: '4',
            // A killed worker's BullMQ jobs are taken over quickly.
            WORKER_LOCK_DURATION_MS: String(chaosWorkerLockMs),
            INBOX_BACKOFF_BASE_MS: '100',
            INBOX_BACKOFF_MAX_MS: '1000',
            INBOX_RETRY_LATER_BASE_MS: '200',
            INBOX_RETRY_LATER_MAX_DELAY_MS: '1000',
            INBOX_RETRY_LATER_MAX_WAIT_MS: '120000',
            RELAY_INTERVAL_MS: '250',
            RELAY_STALE_AFTER_MS: '1500',
            RELAY_PROCESSING_STALE_AFTER_MS: '4000',
            REVENUECAT_API_KEY: fakeRevenueCatApiKey,
            REVENUECAT_API_BASE_URL: this.revenueCat.baseUrl,
            REVENUECAT_API_TIMEOUT_MS: '2000',
            // The provider simulator does not list token pack purchases in non_subscriptions yet:
            // packs credit from the body, as in the demo (verification: revenuecat-pack-verification).
            REVENUECAT_VERIFY_PURCHASES: 'false',
            STRIPE_SECRET_KEY: chaosStripeApiKey,
            STRIPE_API_BASE_URL: this.stripe.baseUrl,
            STRIPE_TIMEOUT_MS: '2000',
            AI_STUDIO_BASE_URL: this.ai.url,
            AI_STUDIO_API_KEY: chaosAiKey,
            AI_STUDIO_TIMEOUT_MS: '2000',
            STUDIO_CONCURRENCY: '2',
            STUDIO_MAX_ATTEMPTS: '5',
            STUDIO_SWEEP_INTERVAL_MS: '500',
            STUDIO_STUCK_AFTER_MS: '5000',
            INSTALLMENTS_INTERVAL_MS: '500',
            INSTALLMENTS_PROCESSING_STALE_AFTER_MS: '4000',
            // The credit-expiry sweeper (a role of every worker): lots granted with an expiry a few
            // seconds out expire while the money-paths scenario's holds and captures run.
            CREDIT_EXPIRY_INTERVAL_MS: '500',
            CREDIT_EXPIRY_BATCH_SIZE: '5',
            APP_WEBHOOK_URL: this.receiver.url,
            APP_WEBHOOK_SECRETS: chaosAppWebhookSecrets.join(','),
            APP_WEBHOOK_TIMEOUT_MS: String(chaosAppWebhookTimeoutMs),
            APP_WEBHOOK_RETRY_SCHEDULE_MS: chaosAppWebhookRetryScheduleMs.join(','),
            ...options.workerEnv,
          },
          'worker started',
          podFor(`worker-${i}`),
        ),
      );
    }
    const apiPort = await freePort();
    this.api = new SupervisedProcess(
      'api',
      'api',
      apiPort,
      {
        ...base,
        API_PORT: String(apiPort),
        API_ANSWER_DEADLINE_MS: String(chaosApiAnswerDeadlineMs),
        APP_API_KEYS: chaosAppKey,
        ADMIN_API_KEYS: chaosAdminKey,
        STRIPE_SECRET_KEY: chaosStripeApiKey,
        STRIPE_API_BASE_URL: this.stripe.baseUrl,
        REVENUECAT_API_KEY: fakeRevenueCatApiKey,
        REVENUECAT_API_BASE_URL: this.revenueCat.baseUrl,
        STRIPE_TIMEOUT_MS: '2000',
        REVENUECAT_API_TIMEOUT_MS: '2000',
        // A key whose attempt died with the api (kill -9) is taken over after 3 s, not 60 s.
        IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: String(chaosIdempotencyLockMs),
      },
      'api listening',
      podFor('api'),
    );
    await Promise.all(this.processes().map((process) => process.start()));
  }

  private checkerDb(): Database<DB> {
    return createDb<DB>({
      connectionString: this.postgres.url('tally'),
      maxConnections: 4,
      applicationName: 'chaos-checker',
    });
  }

  /**
   * Waits until the standby streams, then names it synchronous on the primary (set after the
   * base backup, so the standby's own copy of the configuration does not wait for a standby of
   * its own once promoted) and waits until the primary reports it `sync`.
   */
  private async makeStandbySynchronous(): Promise<void> {
    // The standby retries its lost primary every 200 ms (default 5 s): a promotion does not wait
    // out the retry in progress.
    const standbyAdmin = createDb<DB>({
      connectionString: this.standby?.url() ?? '',
      maxConnections: 1,
      applicationName: 'chaos-admin',
    });
    try {
      await sql`ALTER SYSTEM SET wal_retrieve_retry_interval = '200ms'`.execute(standbyAdmin.db);
      await sql`SELECT pg_reload_conf()`.execute(standbyAdmin.db);
    } finally {
      await standbyAdmin.close();
    }
    const admin = createDb<DB>({
      connectionString: this.postgres.url(),
      maxConnections: 1,
      applicationName: 'chaos-admin',
    });
    try {
      await sql`ALTER SYSTEM SET synchronous_standby_names = '*'`.execute(admin.db);
      await sql`ALTER SYSTEM SET synchronous_commit = 'on'`.execute(admin.db);
      await sql`SELECT pg_reload_conf()`.execute(admin.db);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { rows } = await sql<{ sync_state: string }>`
          SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'`.execute(admin.db);
        if (rows.some((row) => row.sync_state === 'sync')) return;
        if (Date.now() > deadline) throw new Error(`the standby never became synchronous: ${JSON.stringify(rows)}`);
        await sleep(100);
      }
    } finally {
      await admin.close();
    }
  }

  /**
   * The primary's WAL sender(s) to the standby, for `pauseReplication`: SIGSTOP freezes what the
   * standby receives (a replication stall) while the primary goes on.
   */
  async walSenderPids(): Promise<number[]> {
    const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_replication`.execute(this.db);
    return rows.map((row) => row.pid);
  }

  /**
   * The failover: the primary (already killed, or killed here) is given up, the standby promoted,
   * PgBouncer pointed at it (RELOAD), the checker reconnected to it. The services are not touched.
   */
  async failover(): Promise<{ promotedMs: number }> {
    const standby = this.standby;
    const pgbouncer = this.pgbouncer;
    if (!standby || !pgbouncer) throw new Error('no standby to fail over to');
    const old = this.postgres;
    if (old.pid) old.kill9();
    const started = Date.now();
    await standby.promote();
    const promotedMs = Date.now() - started;
    await pgbouncer.repoint(standby.port);
    this.formerPrimaries.push(old);
    this.postgres = standby;
    this.standby = undefined;
    const previous = this.database;
    this.database = this.checkerDb();
    await previous.close().catch(() => undefined);
    return { promotedMs };
  }

  processes(): SupervisedProcess[] {
    return [...this.ingests, ...this.workers, ...(this.api ? [this.api] : [])];
  }

  async allReady(): Promise<void> {
    await Promise.all(this.processes().map((process) => process.ready()));
  }

  /**
   * Stops every worker cleanly at once (SIGTERM; the supervisor leaves them stopped), so nothing
   * writes while the checks read: the workers are the only processes that write on their own (the
   * credit-expiry sweeper, the relay, the installments and studio sweepers; ingest and the api
   * write only when asked). Each loop finishes its tick and each consumer drains, so whatever they
   * were doing is committed or rolled back, never frozen half-way. `wake` starts them again.
   */
  async quiesce(): Promise<
    { name: string; exit: { code: number | null; signal: NodeJS.Signals | null }; ms: number }[]
  > {
    return Promise.all(this.workers.map(async (worker) => ({ name: worker.name, ...(await worker.suspend()) })));
  }

  /** The workers `quiesce` stopped, started again and ready. */
  async wake(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.restart()));
  }

  /** Every log line of every process, every incarnation. */
  allOutput(): string {
    return this.processes()
      .map((process) => process.output)
      .join('\n');
  }

  /** FLUSHALL: every queued job, lock and BullMQ key is gone; the rows are not. */
  async flushRedis(): Promise<void> {
    const client = new Redis(this.redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      await client.connect();
      await client.flushall();
    } finally {
      client.disconnect();
    }
  }

  /** Stops redis-server (SIGKILL, nothing persisted) for `downMs`, then starts it again empty. */
  async restartRedis(downMs: number): Promise<void> {
    await this.redis.stopServer();
    await sleep(downMs);
    await this.redis.startServer();
  }

  /** `pg_ctl stop -m immediate` (a crash: connections cut, recovery on start) for `downMs`. */
  async crashPostgres(downMs: number): Promise<void> {
    await this.postgres.stopServer('immediate');
    await sleep(downMs);
    await this.postgres.startServer();
  }

  apiRequest(
    path: string,
    options: { method?: string; key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? (path.startsWith('/admin') ? chaosAdminKey : chaosAppKey) : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const method = options.method ?? 'GET';
    const sent = fetch(`http://${this.api.host}:${this.api.port}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(chaosApiClientTimeoutMs),
    });
    return method === 'POST' && path.startsWith('/v1/') && key !== null
      ? this.keyed.record(path, options.body, headers['idempotency-key'], sent)
      : sent;
  }

  /** The receiver healthy again (listening, answering 204 at once), before a settle. */
  async healReceiver(): Promise<void> {
    this.receiver.answers.length = 0;
    this.receiver.answerFor = undefined;
    this.receiver.defaultAnswer = { kind: 'status', status: 204 };
    await this.receiver.up();
  }

  async stop(): Promise<void> {
    await Promise.all(this.processes().map((process) => process.stop().catch(() => undefined)));
    await this.database?.close().catch(() => undefined);
    await Promise.all([
      this.stripe?.stop().catch(() => undefined),
      this.revenueCat?.stop().catch(() => undefined),
      this.ai?.stop().catch(() => undefined),
      this.receiver?.stop().catch(() => undefined),
    ]);
    await this.redis?.stopServer().catch(() => undefined);
    await this.pgbouncer?.stop().catch(() => undefined);
    await this.standby?.destroy().catch(() => undefined);
    for (const old of this.formerPrimaries) await old.destroy().catch(() => undefined);
    await this.postgres?.destroy().catch(() => undefined);
    this.network?.destroy();
  }
}
