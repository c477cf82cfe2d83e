import {
  appleNotificationSettingsOf,
  createAppleNotificationVerifier,
  type DB,
  exampleCatalogPath,
  inboxRelaySource,
  loadCatalog,
} from '@tally/billing-core';
import {
  connectProducerRedis,
  createProducerQueue,
  createServiceDb,
  enqueueJobs,
  googlePlayPushVariables,
  logProviderStatus,
  postgresCheck,
  redisCheck,
  runService,
  startServiceServer,
} from '@tally/platform';
import { createIngestApp } from './app';
import { ingestEnvSchema } from './config';
import { createInboxBatcher } from './inbox-batcher';
import { createIngestMetrics } from './ingest-metrics';

// The composition root: the only place that reads process.env.
runService('ingest', ingestEnvSchema, process.env, async (config, logger) => {
  // Ingest does not use the catalog, but a bad CATALOG_PATH should stop every process alike.
  loadCatalog(config.CATALOG_PATH ?? exampleCatalogPath);
  const metrics = createIngestMetrics();
  // The root certificates are read at start: a path that is no certificate stops the process.
  const apple = appleNotificationSettingsOf(config);
  const database = createServiceDb<DB>(config, logger, {
    name: 'ingest',
    whileDown: 'webhooks answer 503',
    // Every batch insert allowed in flight keeps its connection warm: the first webhooks after
    // a quiet spell do not pay for starting backends.
    minConnections: config.INGEST_BATCH_CONCURRENCY,
  });
  const redis = await connectProducerRedis(config, logger);
  // Google Play is on only with its whole push configuration (production refuses half of one).
  const googlePlay =
    config.GOOGLE_PLAY_PACKAGE_NAME && config.GOOGLE_PUBSUB_AUDIENCE && config.GOOGLE_PUBSUB_SERVICE_ACCOUNT
      ? {
          packageName: config.GOOGLE_PLAY_PACKAGE_NAME,
          audience: config.GOOGLE_PUBSUB_AUDIENCE,
          serviceAccountEmail: config.GOOGLE_PUBSUB_SERVICE_ACCOUNT,
          certsUrl: config.GOOGLE_OIDC_CERTS_URL,
        }
      : undefined;
  const queue = createProducerQueue(redis, config.QUEUE_PREFIX, inboxRelaySource.queue);

  logProviderStatus(logger, [
    {
      name: 'stripe',
      on: config.STRIPE_WEBHOOK_SECRETS.length > 0,
      whenOff: 'POST /webhooks/stripe answers 503 not_configured (set STRIPE_WEBHOOK_SECRETS)',
    },
    {
      name: 'revenuecat',
      on: config.REVENUECAT_WEBHOOK_AUTH.length > 0,
      whenOff: 'POST /webhooks/revenuecat answers 503 not_configured (set REVENUECAT_WEBHOOK_AUTH)',
    },
    {
      name: 'apple',
      on: apple !== undefined,
      whenOff:
        'POST /webhooks/apple answers 503 not_configured (set APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID)',
    },
    {
      name: 'google_play',
      on: googlePlay !== undefined,
      whenOff: `POST /webhooks/google-play answers 503 not_configured (set ${googlePlayPushVariables.join(', ')})`,
    },
  ]);

  const inbox = createInboxBatcher({
    db: database.db,
    enqueueMany: (inboxEventIds) =>
      enqueueJobs(
        queue,
        inboxEventIds.map((id) => inboxRelaySource.toPayload(id)),
      ),
    logger,
    maxBatchSize: config.INGEST_BATCH_MAX_SIZE,
    maxConcurrentBatches: config.INGEST_BATCH_CONCURRENCY,
    answerDeadlineMs: config.INGEST_ANSWER_DEADLINE_MS,
  });
  const app = createIngestApp({
    inbox,
    logger,
    metrics,
    stripeWebhookSecrets: config.STRIPE_WEBHOOK_SECRETS,
    stripeToleranceSeconds: config.STRIPE_WEBHOOK_TOLERANCE_SECONDS,
    revenueCatAuthorizations: config.REVENUECAT_WEBHOOK_AUTH,
    appleNotifications: apple && createAppleNotificationVerifier(apple),
    googlePlay,
    bodyLimitBytes: config.WEBHOOK_BODY_LIMIT_BYTES,
    maxInFlight: config.INGEST_MAX_IN_FLIGHT,
    failedAuthLimit: { limit: config.WEBHOOK_FAILED_AUTH_LIMIT, windowMs: config.WEBHOOK_FAILED_AUTH_WINDOW_MS },
    readiness: {
      postgres: postgresCheck(database.db),
    },
    informationalReadiness: {
      redis: redisCheck(redis),
    },
  });
  const listen = { port: config.INGEST_PORT, host: config.INGEST_HOST };
  const server = await startServiceServer(app, config, listen, { clientErrors: metrics.clientErrors, logger });
  logger.info({ host: server.host, port: server.port }, 'ingest listening');
  return {
    stop: async () => {
      await server.close();
      // Answers are sent; the hand-offs behind them finish before the queue closes.
      await inbox.drain();
      await queue.close().catch(() => undefined);
      redis.disconnect();
      await database.close();
    },
  };
});
