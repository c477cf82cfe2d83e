import {
  appleNotificationSettingsOf,
  appStoreApiClientOf,
  appWebhookSource,
  createAppleNotificationVerifier,
  createRevenueCatApiClient,
  createStripeApi,
  type DB,
  exampleCatalogPath,
  inboxRelaySource,
  loadCatalog,
  studioRelaySource,
  systemClock,
} from '@tally/billing-core';
import {
  connectProducerRedis,
  createCommittedRowsHandOff,
  createProducerQueue,
  createServiceDb,
  handOffRows,
  logProviderStatus,
  postgresCheck,
  redisCheck,
  runService,
  startServiceServer,
} from '@tally/platform';
import { createApiMetrics } from './api-metrics';
import { closeApiApp, createApiApp } from './app';
import { appWebhookDeliveryOf } from './app-webhook-delivery';
import { apiEnvSchema } from './config';

// The composition root: the only place that reads process.env.
runService('api', apiEnvSchema, process.env, async (config, logger) => {
  const catalog = loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const stripe = config.STRIPE_SECRET_KEY
    ? createStripeApi({
        secretKey: config.STRIPE_SECRET_KEY,
        apiBaseUrl: config.STRIPE_API_BASE_URL,
        timeoutMs: config.STRIPE_TIMEOUT_MS,
      })
    : undefined;
  // Apple reconciliation needs both halves of Apple's configuration; the key and the root
  // certificates are read at start (a bad path stops the process).
  const appleNotifications = appleNotificationSettingsOf(config);
  const appStoreApi = appStoreApiClientOf(config);
  const appleReconcile =
    appleNotifications && appStoreApi
      ? {
          api: appStoreApi,
          verify: createAppleNotificationVerifier(appleNotifications),
          environments: config.PAYMENT_ENVIRONMENTS,
        }
      : undefined;
  const metrics = createApiMetrics();
  const database = createServiceDb<DB>(config, logger, { name: 'api', whileDown: 'requests answer 503' });
  const redis = await connectProducerRedis(config, logger);
  const queue = createProducerQueue(redis, config.QUEUE_PREFIX, inboxRelaySource.queue);
  const studioQueue = createProducerQueue(redis, config.QUEUE_PREFIX, studioRelaySource.queue);
  const appWebhookQueue = createProducerQueue(redis, config.QUEUE_PREFIX, appWebhookSource.queue);
  // With APP_WEBHOOK_URL, the messages of a studio debit, a top-up or a sync go to the
  // app-webhooks queue right after their commit (the relay covers a hand-off that fails).
  const appWebhookHandOff =
    config.APP_WEBHOOK_URL === undefined
      ? undefined
      : createCommittedRowsHandOff({
          queue: appWebhookQueue,
          source: appWebhookSource,
          db: database.db,
          logger,
        });

  const app = createApiApp({
    db: database.db,
    outbox: {
      lowBalanceThreshold: config.WALLET_LOW_BALANCE_THRESHOLD,
      handOff: appWebhookHandOff?.handOff,
      debtPolicy: config.DEBT_POLICY,
    },
    logger,
    metrics,
    appApiKeys: config.APP_API_KEYS,
    adminApiKeys: config.ADMIN_API_KEYS,
    failedAuthLimit: { limit: config.API_FAILED_AUTH_LIMIT, windowMs: config.API_FAILED_AUTH_WINDOW_MS },
    enqueue: (ids) => handOffRows(queue, inboxRelaySource, database.db, ids),
    enqueueAppWebhooks: (ids) => handOffRows(appWebhookQueue, appWebhookSource, database.db, ids),
    appWebhookDelivery: appWebhookDeliveryOf(config.APP_WEBHOOK_URL),
    subscriptions: {
      catalog,
      policy: { paymentEnvironments: new Set(config.PAYMENT_ENVIRONMENTS), stripeConnectAccounts: new Set() },
      revenueCat: config.REVENUECAT_API_KEY
        ? createRevenueCatApiClient({
            apiKey: config.REVENUECAT_API_KEY,
            baseUrl: config.REVENUECAT_API_BASE_URL,
            timeoutMs: config.REVENUECAT_API_TIMEOUT_MS,
            onCustomerCreated: (userId) => {
              metrics.revenueCatCustomersCreated.inc();
              logger.warn(
                { userId },
                'RevenueCat created a customer on read (201): Tally read an id RevenueCat did not know',
              );
            },
          })
        : undefined,
    },
    studio: {
      catalog,
      clock: systemClock,
      enqueueStudio: (ids) => handOffRows(studioQueue, studioRelaySource, database.db, ids),
    },
    catalog,
    stripe,
    appleReconcile,
    queues: { connection: redis, prefix: config.QUEUE_PREFIX },
    holds: { defaultTtlSeconds: config.HOLD_DEFAULT_TTL_SECONDS },
    spendBatch: { maxItems: config.SPEND_BATCH_MAX_DEBITS, maxTransactions: config.SPEND_BATCH_TRANSACTIONS },
    spendLimits: { daily: config.SPEND_LIMIT_DAILY ?? null, monthly: config.SPEND_LIMIT_MONTHLY ?? null },
    answerDeadlineMs: config.API_ANSWER_DEADLINE_MS,
    idempotency: { lockTimeoutMs: config.IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS },
    readiness: {
      postgres: postgresCheck(database.db),
      redis: redisCheck(redis),
    },
  });
  const listen = { port: config.API_PORT, host: config.API_HOST };
  const server = await startServiceServer(app, config, listen, { clientErrors: metrics.clientErrors, logger });
  logProviderStatus(logger, [
    {
      name: 'stripe',
      on: stripe !== undefined,
      whenOff: 'top-ups and reconciliation answer 503 not_configured (set STRIPE_SECRET_KEY)',
    },
    {
      name: 'revenuecat',
      on: config.REVENUECAT_API_KEY !== undefined,
      whenOff: 'POST /v1/users/{userId}/subscription/sync answers 503 not_configured (set REVENUECAT_API_KEY)',
    },
    {
      name: 'apple',
      on: appleReconcile !== undefined,
      whenOff:
        'POST /admin/reconcile/apple answers 503 not_configured (set APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH, APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID)',
    },
  ]);
  logger.info({ host: server.host, port: server.port }, 'api listening');
  return {
    stop: async () => {
      await server.close();
      await closeApiApp(app);
      await appWebhookHandOff?.drain();
      await queue.close().catch(() => undefined);
      await studioQueue.close().catch(() => undefined);
      await appWebhookQueue.close().catch(() => undefined);
      redis.disconnect();
      await database.close();
    },
  };
});
