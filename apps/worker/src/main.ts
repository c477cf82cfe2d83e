import {
  appleNotificationSettingsOf,
  appStoreApiClientOf,
  createAiStudioClient,
  createAppleNotificationVerifier,
  createAppWebhookSender,
  createGooglePlayApiClient,
  createInboxHandlers,
  createRevenueCatApiClient,
  createStripeApi,
  type DB,
  exampleCatalogPath,
  loadCatalog,
  type ProviderPorts,
  readServiceAccountKey,
} from '@tally/billing-core';
import {
  ConfigError,
  createHealthRoutes,
  createServiceApp,
  createServiceDb,
  logProviderStatus,
  postgresCheck,
  runService,
  startServiceServer,
  stopWithin,
} from '@tally/platform';
import {
  appleConsumptionConfigProblems,
  appWebhookConfigProblems,
  autoTopupConfigProblems,
  googlePlayConfigProblems,
  studioConfigProblems,
  workerEnvSchema,
  workerPoolSize,
} from './config';
import { createMailer } from './email/create-mailer';
import { unverifiedPacksWarning, workerProviderSwitches } from './provider-switches';
import { workerSettingsFrom } from './settings-from-config';
import { startWorkerRuntime } from './worker-runtime';

/**
 * The share of SHUTDOWN_TIMEOUT_MS the worker's stop may take before it abandons what still waits
 * (stopWithin); the rest is margin for a starved process's late timers before runMain's deadline.
 */
const WORKER_STOP_BUDGET_SHARE = 0.8;

// The composition root: the only place that reads process.env.
runService('worker', workerEnvSchema, process.env, async (config, logger) => {
  const studioProblems = [
    ...studioConfigProblems(config),
    ...appWebhookConfigProblems(config),
    ...autoTopupConfigProblems(config),
    ...appleConsumptionConfigProblems(config),
    ...googlePlayConfigProblems(config),
  ];
  if (studioProblems.length > 0) {
    throw new ConfigError(`invalid configuration:\n${studioProblems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
  const catalog = loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const database = createServiceDb<DB>(config, logger, {
    name: 'worker',
    whileDown: 'jobs retry',
    maxConnections: workerPoolSize(config),
  });
  // Provider API clients, the AI service and the mailer are built here from configuration as
  // the flows land; a port left out makes the events that need it park as not_configured.
  const ports: ProviderPorts = {};
  if (config.REVENUECAT_API_KEY) {
    ports.revenueCat = createRevenueCatApiClient({
      apiKey: config.REVENUECAT_API_KEY,
      baseUrl: config.REVENUECAT_API_BASE_URL,
      timeoutMs: config.REVENUECAT_API_TIMEOUT_MS,
      onCustomerCreated: (userId) => {
        // Called only while events are processed, so after the runtime below has started.
        runtime.metrics.revenueCatCustomersCreated.inc();
        logger.warn(
          { userId },
          'RevenueCat created a customer on read (201): Tally read an id RevenueCat did not know',
        );
      },
    });
  }
  if (config.AI_STUDIO_BASE_URL !== undefined && config.AI_STUDIO_API_KEY !== undefined) {
    ports.aiStudio = createAiStudioClient({
      baseUrl: config.AI_STUDIO_BASE_URL,
      apiKey: config.AI_STUDIO_API_KEY,
      timeoutMs: config.AI_STUDIO_TIMEOUT_MS,
    });
  }
  if (config.STRIPE_SECRET_KEY) {
    ports.stripe = createStripeApi({
      secretKey: config.STRIPE_SECRET_KEY,
      apiBaseUrl: config.STRIPE_API_BASE_URL,
      timeoutMs: config.STRIPE_TIMEOUT_MS,
    });
  }
  ports.appStore = appStoreApiClientOf(config);
  // The notification check ingest uses, for apple-reconcile: the root certificates are read at
  // start (a path that is no certificate stops the process).
  const appleNotificationSettings = appleNotificationSettingsOf(config);
  const appleNotifications = appleNotificationSettings && createAppleNotificationVerifier(appleNotificationSettings);
  // Google Play's API only with the package and the key file both set (production refuses one alone).
  if (config.GOOGLE_PLAY_PACKAGE_NAME && config.GOOGLE_SERVICE_ACCOUNT_KEY_PATH) {
    ports.googlePlay = createGooglePlayApiClient({
      packageName: config.GOOGLE_PLAY_PACKAGE_NAME,
      key: readServiceAccountKey(config.GOOGLE_SERVICE_ACCOUNT_KEY_PATH),
      tokenUrl: config.GOOGLE_OAUTH_TOKEN_URL,
      baseUrl: config.GOOGLE_PLAY_API_BASE_URL,
      timeoutMs: config.GOOGLE_PLAY_API_TIMEOUT_MS,
    });
  }
  const mailer = createMailer({ smtpUrl: config.SMTP_URL, from: config.EMAIL_FROM, logger });
  const handlers = createInboxHandlers({
    catalog,
    ports,
    policy: {
      paymentEnvironments: new Set(config.PAYMENT_ENVIRONMENTS),
      stripeConnectAccounts: new Set(config.STRIPE_CONNECT_ACCOUNTS),
    },
    verifyRevenueCatPurchases: config.REVENUECAT_VERIFY_PURCHASES,
  });
  const runtime = startWorkerRuntime({
    db: database.db,
    handlers,
    catalog,
    logger,
    redisUrl: config.REDIS_URL,
    redisCommandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    queuePrefix: config.QUEUE_PREFIX,
    roles: config.WORKER_ROLES,
    settings: workerSettingsFrom(config),
    ports: {
      aiStudio: ports.aiStudio,
      stripe: ports.stripe,
      appStore: ports.appStore,
      appleNotifications,
      googlePlay: ports.googlePlay,
      mailer,
      appWebhookSender:
        config.APP_WEBHOOK_URL === undefined
          ? undefined
          : createAppWebhookSender({
              url: config.APP_WEBHOOK_URL,
              secrets: config.APP_WEBHOOK_SECRETS,
              timeoutMs: config.APP_WEBHOOK_TIMEOUT_MS,
            }),
    },
  });
  // createServiceApp: unknown routes get the JSON 404, not Express's HTML page.
  const app = createServiceApp({
    logger,
    routes: (service) =>
      service.use(
        createHealthRoutes({
          registry: runtime.metrics.registry,
          beforeScrape: runtime.refreshGauges,
          logger,
          checks: {
            postgres: postgresCheck(database.db),
            redis: runtime.pingRedis,
          },
        }),
      ),
  });
  const listen = { port: config.WORKER_METRICS_PORT, host: config.WORKER_METRICS_HOST };
  const server = await startServiceServer(app, config, listen, { clientErrors: runtime.metrics.clientErrors, logger });
  logProviderStatus(logger, workerProviderSwitches(config));
  const unverifiedPacks = unverifiedPacksWarning(config);
  if (unverifiedPacks) logger.warn(unverifiedPacks);
  logger.info(
    {
      metricsHost: server.host,
      metricsPort: server.port,
      roles: config.WORKER_ROLES,
      concurrency: config.WORKER_CONCURRENCY,
      maxAttempts: config.INBOX_MAX_ATTEMPTS,
      paymentEnvironments: config.PAYMENT_ENVIRONMENTS,
    },
    'worker started',
  );
  return {
    // Bounded within the budget (before runMain's hard deadline exits 1): cut off from Postgres or
    // Redis, a loop's tick, a forced consumer close or the pool's end can wait on a link that never
    // answers. What is still waiting then is abandoned, named in a warning, and the process exits 0.
    stop: async () => {
      await stopWithin(
        Math.floor(config.SHUTDOWN_TIMEOUT_MS * WORKER_STOP_BUDGET_SHARE),
        [
          {
            name: 'roles',
            stop: () => runtime.stop(),
            abandons:
              'jobs still held are re-run by another worker once their lock expires; a transaction in flight rolls back when its connection closes',
          },
          { name: 'metrics server', stop: () => server.close(), abandons: 'open scrapes are cut' },
          {
            name: 'database pool',
            stop: () => database.close(),
            abandons: 'connections still in a statement close with the process; their transactions roll back',
          },
        ],
        logger,
      );
    },
  };
});
