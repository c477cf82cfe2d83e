import {
  type AppleNotificationVerifier,
  type AppWebhookJob,
  type AppWebhookOutbox,
  appWebhookSource,
  type Catalog,
  createInboxHandlers,
  type DebtPolicy,
  type EventPolicy,
  exampleCatalogPath,
  type InboxHandlers,
  type InboxJob,
  type InboxProcessorDeps,
  inboxRelaySource,
  inUnitOfWork,
  loadCatalog,
  noSpendLimits,
  type Provider,
  type ProviderPorts,
  plainLots,
  postLedgerEntry,
  type RetryLaterSettings,
  type SpendLimitDefaults,
  type StudioJob,
  studioRelaySource,
  type UnitOfWork,
  type UnitOfWorkDeps,
} from '@tally/billing-core';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { createTallyClient, type TallyClient } from '@tally/client';
import {
  type CommittedRowsHandOff,
  createClientErrorReporter,
  createCommittedRowsHandOff,
  createLogger,
  createProducerQueue,
  createRedisConnection,
  enqueueJobs,
  type HttpServerOptions,
  handOffRows,
  type Logger,
  type ProducerQueue,
  type ReadinessCheck,
  type RunningServer,
  startHttpServer,
  waitUntilReady,
} from '@tally/platform';
import type { TransactionBatcherSettings } from '@tally/platform/db';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import Stripe from 'stripe';
import { createApiMetrics } from '../../apps/api/src/api-metrics';
import { createApiApp } from '../../apps/api/src/app';
import { createIngestApp } from '../../apps/ingest/src/app';
import { ingestEnvSchema } from '../../apps/ingest/src/config';
import { createInboxBatcher, type InboxBatcher } from '../../apps/ingest/src/inbox-batcher';
import { createIngestMetrics, type IngestMetrics } from '../../apps/ingest/src/ingest-metrics';
import type { GooglePlayPushSettings } from '../../apps/ingest/src/routes/google-play-webhook-route';
import { type WorkerRole, workerEnvSchema } from '../../apps/worker/src/config';
import type { WorkerPorts } from '../../apps/worker/src/roles/worker-role';
import type { WorkerRuntimeSettings } from '../../apps/worker/src/roles/worker-runtime-settings';
import { workerSettingsFrom } from '../../apps/worker/src/settings-from-config';
import { startWorkerRuntime, type WorkerRuntime } from '../../apps/worker/src/worker-runtime';
import { FakeClock } from './fakes/fake-clock';
import { FakeStripe } from './fakes/fake-stripe';
import { checkApiAnswer } from './openapi-answers';

export const stripeSecret = 'whsec_test_current_secret';
export const stripeOldSecret = 'whsec_test_previous_secret';
export const revenueCatAuth = 'Bearer rc_test_webhook_auth';
export const appKey = 'app_test_key';
export const adminKey = 'admin_test_key';

export interface WorkerSettings {
  maxAttempts?: number;
  /** How inbox first runs share transactions (default: the worker's defaults). */
  batch?: TransactionBatcherSettings;
  backoff?: { baseDelayMs: number; maxDelayMs: number };
  retryLater?: RetryLaterSettings;
  relay?: { intervalMs: number; staleAfterMs: number; processingStaleAfterMs: number; batchSize: number };
  /** Replaces the handlers built from the stack's ports and policy. */
  handlers?: InboxHandlers;
  roles?: WorkerRole[];
  concurrency?: number;
  /**
   * AI Studio consumer and sweeper settings (default: the stack's aiStudio port, quick retries,
   * sweeper run by hand).
   */
  studio?: Partial<WorkerRuntimeSettings['studio']> & {
    aiStudio?: WorkerPorts['aiStudio'];
    sweeper?: WorkerRuntimeSettings['studioSweeper'];
  };
  /** The installments role's loop (tests usually call runOnce; default: the config's). */
  installments?: WorkerRuntimeSettings['installments'];
  /** The credit-expiry role's loop (default: an hour's interval, so tests run it by runOnce). */
  creditExpiry?: Partial<WorkerRuntimeSettings['creditExpiry']>;
  /** The email role's mailer and retry settings. */
  email?: {
    mailer: NonNullable<WorkerPorts['mailer']>;
    maxAttempts?: number;
    backoff?: { baseDelayMs: number; maxDelayMs: number };
  };
  /** The app-webhooks role's sender and schedule (and the retention of its messages; default: the config's). */
  appWebhooks?: Partial<WorkerRuntimeSettings['appWebhooks']> & { sender: WorkerPorts['appWebhookSender'] };
  /** The retention and reconcile roles' loops (tests usually call runOnce; default: the config's). */
  retention?: WorkerRuntimeSettings['retention'];
  reconcile?: WorkerRuntimeSettings['reconcile'] & { stripe: WorkerPorts['stripe'] };
  /**
   * The apple-reconcile role's pass (default an hour's interval over the config's window, so tests
   * run it by runOnce; its environments the stack's policy). Its API is the stack's `ports.appStore`,
   * its check the stack's `appleNotifications` (ingest's).
   */
  appleReconcile?: Partial<WorkerRuntimeSettings['appleReconcile']>;
  /** The auto-topup role's loop (default the config's, every 100 ms); its Stripe is the stack's `ports.stripe`. */
  autoTopup?: Partial<WorkerRuntimeSettings['autoTopup']>;
  /** The apple-consumption role's loop (default the config's, every 100 ms); its API is the stack's `ports.appStore`. */
  appleConsumption?: Partial<WorkerRuntimeSettings['appleConsumption']>;
  /** Google Play's loops (default the config's, consumes every 100 ms); their API is the stack's `ports.googlePlay`. */
  googlePlayConsume?: Partial<WorkerRuntimeSettings['googlePlayConsume']>;
  googlePlayVoidedPass?: WorkerRuntimeSettings['googlePlayVoidedPass'];
  /** The worker's logger (default silent); captureLogs() in log-capture.ts keeps its lines. */
  logger?: Logger;
  /** WORKER_LOCK_DURATION_MS: BullMQ lock and stalled check of every consumer (default BullMQ's). */
  lockDurationMs?: number;
}

export interface TestStackOptions {
  redisUrl?: string;
  ports?: ProviderPorts;
  policy?: EventPolicy;
  /** REVENUECAT_VERIFY_PURCHASES for the handlers (default false, as in the demo). */
  verifyRevenueCatPurchases?: boolean;
  /** The api's failure-only key-check limiter (off unless given). */
  apiFailedAuthLimit?: { limit: number; windowMs: number };
  /** API_ANSWER_DEADLINE_MS of the api (default none). */
  apiAnswerDeadlineMs?: number;
  /** SPEND_LIMIT_DAILY and SPEND_LIMIT_MONTHLY of the api (default none). */
  spendLimits?: SpendLimitDefaults;
  /** SPEND_BATCH_MAX_DEBITS and SPEND_BATCH_TRANSACTIONS of the api (default the api's). */
  spendBatch?: { maxItems: number; maxTransactions: number };
  http?: Omit<HttpServerOptions, 'host'>;
  /** WALLET_LOW_BALANCE_THRESHOLD of the api, the workers and stack.transaction (default unset). */
  lowBalanceThreshold?: number;
  /** DEBT_POLICY of the api, the workers and stack.transaction (default `settle`). */
  debtPolicy?: DebtPolicy;
  /**
   * The api hands the messages it writes to the app-webhooks queue after commit, as with
   * APP_WEBHOOK_URL set (default false: they wait for the relay). Workers do when given a sender.
   */
  appWebhookHandOff?: boolean;
  /** The loggers of ingest and the api (default silent); captureLogs() in log-capture.ts keeps their lines. */
  loggers?: { ingest?: Logger; api?: Logger };
  /** Further /readyz checks of the api (a dependency that is down, for a 503). */
  apiReadiness?: Record<string, ReadinessCheck>;
  /** INGEST_MAX_IN_FLIGHT of ingest (default the config's). */
  ingestMaxInFlight?: number;
  /** The api's view of APP_WEBHOOK_URL: `not_configured` as when it is unset (default `on`). */
  appWebhookDelivery?: 'on' | 'not_configured';
  /** Ingest's App Store notification check (default none: POST /webhooks/apple answers 503). */
  appleNotifications?: AppleNotificationVerifier;
  /** Ingest's Google Play push settings (default none: /webhooks/google-play answers 503 not_configured). */
  googlePlayPush?: GooglePlayPushSettings;
}

/** Tests accept both environments unless they test the policy itself. */
export const bothEnvironments: EventPolicy = {
  paymentEnvironments: new Set(['production', 'sandbox']),
  stripeConnectAccounts: new Set(),
};

/**
 * The worker's settings with an empty environment: the defaults of the config schema, the only
 * place that has them. Tests start from these and override what they speed up.
 */
export const defaultWorkerSettings: WorkerRuntimeSettings = workerSettingsFrom(
  workerEnvSchema.parse({ DATABASE_URL: 'postgres://unused' }),
);

/** Ingest's batching with an empty environment (the config schema's defaults). */
const ingestDefaults = ingestEnvSchema.parse({ DATABASE_URL: 'postgres://unused' });
export const defaultIngestBatching = {
  maxBatchSize: ingestDefaults.INGEST_BATCH_MAX_SIZE,
  maxConcurrentBatches: ingestDefaults.INGEST_BATCH_CONCURRENCY,
};
const defaultIngestMaxInFlight = ingestDefaults.INGEST_MAX_IN_FLIGHT;

const silent = createLogger({ name: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/**
 * Webhook posts to ingest close their connection after the answer. fetch keeps a connection idle
 * until the server's keep-alive hint (5 s) less about a second, checked on a coarse timer; on a
 * machine at a load of 12 or more, this process (which runs ingest too) fell behind by more than
 * that margin, so a post went out on a connection ingest had just closed and failed with
 * ECONNRESET (five suites of one loaded CI run). A provider retries such a post; a test would not.
 */
const oneConnectionPerRequest = { connection: 'close' } as const;

/**
 * The whole Tally stack in-process against real Postgres and Redis: a database of its own, a
 * queue prefix of its own, ingest and api on ephemeral ports, and workers started on demand.
 */
export class TestStack {
  readonly catalog: Catalog = loadCatalog(exampleCatalogPath);
  readonly prefix = uniqueQueuePrefix();
  readonly workers: WorkerRuntime[] = [];
  database!: TestDatabase;
  ingest!: RunningServer;
  /** Ingest's batcher (stores webhooks, hands them to the queue); drained on stop. */
  inbox!: InboxBatcher;
  api!: RunningServer;
  queue!: ProducerQueue<InboxJob>;
  /** Ingest's metrics, for tests that check what a request was counted as. */
  readonly ingestMetrics: IngestMetrics = createIngestMetrics();
  private producer!: Redis;
  /** What stop() also stops, last started first (fakes the stack was started with). */
  private readonly alsoStopped: (() => Promise<void>)[] = [];
  studioQueue!: ProducerQueue<StudioJob>;
  appWebhookQueue!: ProducerQueue<AppWebhookJob>;
  /** The clock the API's studio routes read (the UTC day of the free allowance). */
  readonly clock = new FakeClock();

  /** Provider ports (local fake servers) and the environment policy the handlers are built from. */
  ports: ProviderPorts = {};
  policy: EventPolicy = bothEnvironments;
  /** The api's IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS. */
  readonly idempotencyLockTimeoutMs = 60_000;
  /**
   * REVENUECAT_VERIFY_PURCHASES as the local demo sets it (false: packs credit from the body), so
   * tests of other flows need no RevenueCat fake; the verification tests turn it on.
   */
  verifyRevenueCatPurchases = false;
  apiFailedAuthLimit: { limit: number; windowMs: number } | undefined;
  apiAnswerDeadlineMs: number | undefined;
  apiSpendBatch: { maxItems: number; maxTransactions: number } | undefined;
  /** The api's SPEND_LIMIT_DAILY and SPEND_LIMIT_MONTHLY. */
  spendLimits: SpendLimitDefaults = noSpendLimits;
  /** WALLET_LOW_BALANCE_THRESHOLD of every process of the stack. */
  lowBalanceThreshold: number | undefined;
  /** DEBT_POLICY of every process of the stack. */
  debtPolicy: DebtPolicy = 'settle';
  private apiAppWebhookHandOff: CommittedRowsHandOff | undefined;
  private loggers: { ingest?: Logger; api?: Logger } = {};
  private apiReadiness: Record<string, ReadinessCheck> = {};
  private ingestMaxInFlight = defaultIngestMaxInFlight;
  private appWebhookDelivery: 'on' | 'not_configured' = 'on';
  private appleNotifications: AppleNotificationVerifier | undefined;
  private googlePlayPush: GooglePlayPushSettings | undefined;
  /**
   * The api's app webhook outbox (its threshold, and its hand-off with `appWebhookHandOff`); tests
   * that write money or messages directly use it through transaction() and outboxDeps().
   */
  outbox!: AppWebhookOutbox;

  constructor(
    private readonly redisUrl = testRedisUrl(),
    private readonly http: Omit<HttpServerOptions, 'host'> = {},
  ) {}

  /** `http` sets the slow-client timeouts of the ingest and api servers (production defaults otherwise). */
  static async start(options: TestStackOptions = {}): Promise<TestStack> {
    const stack = new TestStack(options.redisUrl, options.http);
    await stack.begin(options);
    return stack;
  }

  /**
   * Starts a stack made with `new TestStack(redisUrl, http)` (the rest of `options`): suite.ts makes
   * the object when a describe block is declared and starts it in the block's beforeAll.
   */
  async begin(options: Omit<TestStackOptions, 'redisUrl' | 'http'> = {}): Promise<void> {
    if (options.ports) this.ports = options.ports;
    if (options.policy) this.policy = options.policy;
    if (options.verifyRevenueCatPurchases !== undefined)
      this.verifyRevenueCatPurchases = options.verifyRevenueCatPurchases;
    this.apiFailedAuthLimit = options.apiFailedAuthLimit;
    this.apiAnswerDeadlineMs = options.apiAnswerDeadlineMs;
    this.apiSpendBatch = options.spendBatch;
    if (options.spendLimits) this.spendLimits = options.spendLimits;
    this.lowBalanceThreshold = options.lowBalanceThreshold;
    if (options.debtPolicy) this.debtPolicy = options.debtPolicy;
    this.loggers = options.loggers ?? {};
    this.apiReadiness = options.apiReadiness ?? {};
    if (options.ingestMaxInFlight !== undefined) this.ingestMaxInFlight = options.ingestMaxInFlight;
    if (options.appWebhookDelivery !== undefined) this.appWebhookDelivery = options.appWebhookDelivery;
    this.appleNotifications = options.appleNotifications;
    this.googlePlayPush = options.googlePlayPush;
    await this.init(options.appWebhookHandOff ?? false);
  }

  /** The handlers a worker's composition root would build from the stack's ports and policy. */
  handlers(): InboxHandlers {
    return createInboxHandlers({
      catalog: this.catalog,
      ports: this.ports,
      policy: this.policy,
      verifyRevenueCatPurchases: this.verifyRevenueCatPurchases,
    });
  }

  /** What processInboxEvents needs, for tests that drive the engine directly. */
  processorDeps(overrides: Partial<InboxProcessorDeps> = {}): InboxProcessorDeps {
    const { maxAttempts, backoff, retryLater } = defaultWorkerSettings.inbox;
    return {
      db: this.db,
      outbox: this.outbox,
      handlers: this.handlers(),
      maxAttempts,
      backoff,
      retryLater,
      ...overrides,
    };
  }

  /** The database and the api's outbox, for tests that call a use case that writes messages. */
  outboxDeps(): UnitOfWorkDeps {
    return { db: this.db, outbox: this.outbox };
  }

  /** One unit of work with the api's outbox, for tests that post ledger entries or messages directly. */
  transaction<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return inUnitOfWork({ db: this.db, outbox: this.outbox }, work);
  }

  /**
   * Posts one ledger entry of plain lots (a test's own grant, or a spend from the oldest lots) in a
   * unit of work of its own, through the ledger as every write of money goes.
   */
  postPlainEntry(entry: { userId: string; reference: string; amount: number; reason: string }) {
    return this.transaction((uow) => postLedgerEntry(uow, { ...entry, lots: plainLots(entry.amount) }));
  }

  get db() {
    return this.database.db;
  }

  private async init(appWebhookHandOff: boolean): Promise<void> {
    this.database = await createTestDatabase();
    this.producer = createRedisConnection(this.redisUrl, 'producer');
    this.queue = createProducerQueue(this.producer, this.prefix, inboxRelaySource.queue);
    this.studioQueue = createProducerQueue(this.producer, this.prefix, studioRelaySource.queue);
    this.appWebhookQueue = createProducerQueue(this.producer, this.prefix, appWebhookSource.queue);
    // Like ingest's main: let the producer connect before the first webhook. A test that plays a
    // Redis outage stops Redis after this.
    await waitUntilReady(this.producer, 10_000);
    this.apiAppWebhookHandOff = appWebhookHandOff
      ? createCommittedRowsHandOff({
          queue: this.appWebhookQueue,
          source: appWebhookSource,
          db: this.db,
          logger: silent,
        })
      : undefined;
    this.outbox = {
      lowBalanceThreshold: this.lowBalanceThreshold,
      handOff: this.apiAppWebhookHandOff?.handOff,
      debtPolicy: this.debtPolicy,
    };
    const readiness = {
      postgres: async () => {
        await sql`SELECT 1`.execute(this.db);
      },
      redis: async () => {
        await this.producer.ping();
      },
    };
    this.inbox = createInboxBatcher({
      ...defaultIngestBatching,
      db: this.db,
      enqueueMany: (ids) =>
        enqueueJobs(
          this.queue,
          ids.map((id) => inboxRelaySource.toPayload(id)),
        ),
      logger: silent,
    });
    this.ingest = await startHttpServer(
      createIngestApp({
        inbox: this.inbox,
        logger: this.loggers.ingest ?? silent,
        metrics: this.ingestMetrics,
        stripeWebhookSecrets: [stripeOldSecret, stripeSecret],
        stripeToleranceSeconds: 300,
        revenueCatAuthorizations: ['Bearer rc_test_previous_auth', revenueCatAuth],
        appleNotifications: this.appleNotifications,
        googlePlay: this.googlePlayPush,
        bodyLimitBytes: 64 * 1024,
        maxInFlight: this.ingestMaxInFlight,
        readiness: { postgres: readiness.postgres },
        informationalReadiness: { redis: readiness.redis },
      }),
      0,
      {
        host: '127.0.0.1',
        onClientError: createClientErrorReporter({
          counter: this.ingestMetrics.clientErrors,
          logger: this.loggers.ingest ?? silent,
        }),
        ...this.http,
      },
    );
    this.api = await startHttpServer(
      createApiApp({
        db: this.db,
        outbox: this.outbox,
        logger: this.loggers.api ?? silent,
        metrics: createApiMetrics(),
        appApiKeys: [appKey],
        adminApiKeys: [adminKey],
        ...(this.apiFailedAuthLimit ? { failedAuthLimit: this.apiFailedAuthLimit } : {}),
        ...(this.apiAnswerDeadlineMs !== undefined ? { answerDeadlineMs: this.apiAnswerDeadlineMs } : {}),
        ...(this.apiSpendBatch ? { spendBatch: this.apiSpendBatch } : {}),
        enqueue: (ids) => handOffRows(this.queue, inboxRelaySource, this.db, ids),
        enqueueAppWebhooks: (ids) => handOffRows(this.appWebhookQueue, appWebhookSource, this.db, ids),
        appWebhookDelivery: this.appWebhookDelivery,
        queues: { connection: this.producer, prefix: this.prefix },
        readiness: { ...readiness, ...this.apiReadiness },
        subscriptions: { catalog: this.catalog, policy: this.policy, revenueCat: this.ports.revenueCat },
        studio: {
          catalog: this.catalog,
          clock: this.clock,
          enqueueStudio: (ids) => handOffRows(this.studioQueue, studioRelaySource, this.db, ids),
        },
        catalog: this.catalog,
        stripe: this.ports.stripe,
        // Apple reconciliation with both halves of Apple's configuration, as the api's main builds it.
        appleReconcile:
          this.ports.appStore && this.appleNotifications
            ? {
                api: this.ports.appStore,
                verify: this.appleNotifications,
                environments: [...this.policy.paymentEnvironments],
              }
            : undefined,
        spendLimits: this.spendLimits,
        idempotency: { lockTimeoutMs: this.idempotencyLockTimeoutMs },
      }),
      0,
      { host: '127.0.0.1', ...this.http },
    );
  }

  /** Starts one worker process's runtime (consumer + relay). Call again for more replicas. */
  startWorker(settings: WorkerSettings = {}): WorkerRuntime {
    const defaults = defaultWorkerSettings;
    const { aiStudio, sweeper, ...studio } = { aiStudio: this.ports.aiStudio, ...settings.studio };
    const runtime = startWorkerRuntime({
      db: this.db,
      handlers: settings.handlers ?? this.handlers(),
      catalog: this.catalog,
      logger: settings.logger ?? silent,
      redisUrl: this.redisUrl,
      queuePrefix: this.prefix,
      roles: settings.roles ?? ['inbox', 'relay'],
      settings: {
        ...defaults,
        lockDurationMs: settings.lockDurationMs ?? defaults.lockDurationMs,
        drainTimeoutMs: 5_000,
        inbox: {
          concurrency: settings.concurrency ?? 4,
          batch: settings.batch ?? defaults.inbox.batch,
          maxAttempts: settings.maxAttempts ?? 15,
          backoff: settings.backoff ?? { baseDelayMs: 50, maxDelayMs: 200 },
          retryLater: settings.retryLater ?? defaults.inbox.retryLater,
        },
        // By default the relay only runs when a test asks (runOnce) or after a long interval.
        relay: settings.relay ?? {
          intervalMs: 60_000,
          staleAfterMs: 60_000,
          processingStaleAfterMs: 60_000,
          batchSize: 100,
        },
        studio: { concurrency: 4, maxAttempts: 3, backoff: { baseDelayMs: 50, maxDelayMs: 200 }, ...studio },
        studioSweeper: sweeper ?? { intervalMs: 60_000, stuckAfterMs: 60_000, batchSize: 100 },
        installments: settings.installments ?? defaults.installments,
        autoTopup: { ...defaults.autoTopup, intervalMs: 100, ...settings.autoTopup },
        appleConsumption: { ...defaults.appleConsumption, intervalMs: 100, ...settings.appleConsumption },
        googlePlayConsume: { ...defaults.googlePlayConsume, intervalMs: 100, ...settings.googlePlayConsume },
        googlePlayVoidedPass: settings.googlePlayVoidedPass ?? { intervalMs: 3_600_000 },
        creditExpiry: { ...defaults.creditExpiry, intervalMs: 3_600_000, ...settings.creditExpiry },
        email: {
          concurrency: settings.concurrency ?? 4,
          maxAttempts: settings.email?.maxAttempts ?? defaults.email.maxAttempts,
          backoff: settings.email?.backoff ?? defaults.email.backoff,
        },
        appWebhooks: {
          concurrency: settings.appWebhooks?.concurrency ?? defaults.appWebhooks.concurrency,
          retryScheduleMs: settings.appWebhooks?.retryScheduleMs ?? defaults.appWebhooks.retryScheduleMs,
          retentionDays: settings.appWebhooks?.retentionDays ?? defaults.appWebhooks.retentionDays,
          lowBalanceThreshold: settings.appWebhooks?.lowBalanceThreshold ?? this.lowBalanceThreshold,
          debtPolicy: this.debtPolicy,
        },
        retention: settings.retention ?? defaults.retention,
        reconcile: settings.reconcile
          ? { intervalMs: settings.reconcile.intervalMs, windowDays: settings.reconcile.windowDays }
          : defaults.reconcile,
        appleReconcile: {
          ...defaults.appleReconcile,
          intervalMs: 3_600_000,
          environments: [...this.policy.paymentEnvironments],
          ...settings.appleReconcile,
        },
      },
      ports: {
        aiStudio,
        stripe: settings.reconcile?.stripe ?? this.ports.stripe,
        googlePlay: this.ports.googlePlay,
        mailer: settings.email?.mailer,
        appWebhookSender: settings.appWebhooks?.sender,
        appStore: this.ports.appStore,
        appleNotifications: this.appleNotifications,
      },
    });
    this.workers.push(runtime);
    return runtime;
  }

  /**
   * Starts a worker that runs only the loop of `role` (the credit-expiry sweeper, the installments…)
   * and returns that loop's runOnce, for a test to run it by hand.
   */
  startLoop(role: WorkerRole, settings: WorkerSettings = {}): () => Promise<void> {
    const loop = this.startWorker({ ...settings, roles: [role] }).loops[role];
    if (!loop) throw new Error(`the ${role} role has no loop`);
    return () => loop.runOnce();
  }

  /** The inbox rows stored for one provider event id (0 or 1: the unique index keeps it so). */
  inboxRows(provider: Provider, providerEventId: string) {
    return this.db
      .selectFrom('inbox_events')
      .selectAll()
      .where('provider', '=', provider)
      .where('provider_event_id', '=', providerEventId)
      .execute();
  }

  /** The inbox row of a provider event; throws when there is none. */
  inboxRow(provider: Provider, providerEventId: string) {
    return this.db
      .selectFrom('inbox_events')
      .selectAll()
      .where('provider', '=', provider)
      .where('provider_event_id', '=', providerEventId)
      .executeTakeFirstOrThrow();
  }

  /**
   * Waits until the inbox row of a provider event is finished: processed, ignored or parked
   * (`failed`). Throws after the usual `eventually` timeout.
   */
  finishedInboxRow(provider: Provider, providerEventId: string) {
    return eventually(`event ${providerEventId} to finish`, async () => {
      const [row] = await this.inboxRows(provider, providerEventId);
      return row && (row.status === 'processed' || row.status === 'ignored' || row.status === 'failed')
        ? row
        : undefined;
    });
  }

  /** Delivers a Stripe event signed with the stack's secret; throws unless answered 200. Returns its id. */
  async deliverStripe(body: string): Promise<string> {
    const response = await this.postStripe(body, signStripe(body));
    if (response.status !== 200) {
      throw new Error(`Stripe delivery answered ${response.status}: ${await response.text()}`);
    }
    return JSON.parse(body).id as string;
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((worker) => worker.stop()));
  }

  postRevenueCat(body: string, authorization: string | null = revenueCatAuth, contentType = 'application/json') {
    const headers: Record<string, string> = { 'content-type': contentType, ...oneConnectionPerRequest };
    if (authorization !== null) headers.authorization = authorization;
    return fetch(`http://127.0.0.1:${this.ingest.port}/webhooks/revenuecat`, { method: 'POST', headers, body });
  }

  /** Posts a Pub/Sub push to /webhooks/google-play with `authorization` (e.g. `Bearer <OIDC token>`) when given. */
  postGooglePlay(body: string, authorization: string | null, contentType = 'application/json') {
    const headers: Record<string, string> = { 'content-type': contentType, ...oneConnectionPerRequest };
    if (authorization !== null) headers.authorization = authorization;
    return fetch(`http://127.0.0.1:${this.ingest.port}/webhooks/google-play`, { method: 'POST', headers, body });
  }

  postStripe(body: string, signature: string | null, contentType = 'application/json') {
    const headers: Record<string, string> = { 'content-type': contentType, ...oneConnectionPerRequest };
    if (signature !== null) headers['stripe-signature'] = signature;
    return fetch(`http://127.0.0.1:${this.ingest.port}/webhooks/stripe`, { method: 'POST', headers, body });
  }

  /** A @tally/client of the api with `key` (an app key by default), its answers matched like apiRequest's. */
  client(key: string = appKey): TallyClient {
    return createTallyClient({
      baseUrl: `http://127.0.0.1:${this.api.port}`,
      apiKey: key,
      fetch: async (request: Request) => {
        const response = await fetch(request);
        await checkApiAnswer(request.method, request.url, response);
        return response;
      },
    });
  }

  /** A request to the api; its answer is matched against the OpenAPI document (checkApiAnswer) before it is returned. */
  async apiRequest(
    path: string,
    options: { method?: string; key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? (path.startsWith('/admin') ? adminKey : appKey) : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const method = options.method ?? 'GET';
    const response = await fetch(`http://127.0.0.1:${this.api.port}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    await checkApiAnswer(method, path, response);
    return response;
  }

  /** The console's page of a user (`/admin/console/users/{userId}`, as support with the admin key), as HTML; throws unless 200. */
  async consoleUserPage(userId: string): Promise<string> {
    const response = await fetch(`http://127.0.0.1:${this.api.port}/admin/console/users/${userId}`, {
      headers: { authorization: `Basic ${Buffer.from(`support:${adminKey}`).toString('base64')}` },
    });
    const html = await response.text();
    if (response.status !== 200) throw new Error(`the console's user page answered ${response.status}: ${html}`);
    return html;
  }

  async stop(): Promise<void> {
    await this.stopWorkers();
    await this.ingest?.close();
    await this.inbox?.drain();
    await this.api?.close();
    await this.apiAppWebhookHandOff?.drain();
    await this.queue?.obliterate({ force: true }).catch(() => undefined);
    await this.queue?.close().catch(() => undefined);
    await this.studioQueue?.obliterate({ force: true }).catch(() => undefined);
    await this.studioQueue?.close().catch(() => undefined);
    await this.appWebhookQueue?.obliterate({ force: true }).catch(() => undefined);
    await this.appWebhookQueue?.close().catch(() => undefined);
    this.producer?.disconnect();
    await this.database?.drop();
    for (const stop of this.alsoStopped.splice(0).reverse()) await stop();
  }

  /** Has stop() also stop something the stack's tests use (a fake server started for it). */
  stopAlso(stop: () => Promise<void>): void {
    this.alsoStopped.push(stop);
  }
}

/**
 * A stack whose Stripe port talks to a FakeStripe started for it (other ports and options as
 * given); `stack.stop()` stops the fake too.
 */
export async function startStackWithFakeStripe(
  options: TestStackOptions = {},
): Promise<{ stack: TestStack; fake: FakeStripe }> {
  const fake = await FakeStripe.start();
  try {
    const stack = await TestStack.start({ ...options, ports: { ...options.ports, stripe: fake.api() } });
    stack.stopAlso(() => fake.stop());
    return { stack, fake };
  } catch (error) {
    await fake.stop();
    throw error;
  }
}

/** Signs a Stripe payload for real, with stripe-node's own test header generator. */
export function signStripe(payload: string, secret = stripeSecret, timestamp = Math.floor(Date.now() / 1000)): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

/**
 * Polls until `check` returns a truthy value or the time runs out (then throws with `what` and
 * the last error `check` threw, if any).
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A response body as loosely typed JSON, for assertions that walk into it. */
// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON answers
export type Json = any;

export async function readJson(response: Response): Promise<Json> {
  return response.json();
}
