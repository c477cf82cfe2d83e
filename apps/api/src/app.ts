import { type AppWebhookOutbox, type Catalog, type DB, queueCatalog, type StripeApi } from '@tally/billing-core';
import {
  createFailedAuthLimiter,
  createHealthRoutes,
  createServiceApp,
  type FailedAuthLimitSettings,
  isDatabaseUnavailableError,
  type Logger,
  type ReadinessCheck,
  sendError,
} from '@tally/platform';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { ApiMetrics } from './api-metrics';
import { type AppWebhookDelivery, notConfiguredNote } from './app-webhook-delivery';
import { consoleHeaders, createConsoleRoutes } from './console/create-console-routes';
import { createQueueDashboard, type QueueDashboard } from './dashboard/create-queue-dashboard';
import { createEmailRetryReset } from './dashboard/email-retry-reset';
import { createInboxRetryReset } from './dashboard/inbox-retry-reset';
import { answerDeadline, answeredAtDeadline } from './http/answer-deadline';
import { auditAdminActions } from './http/audit-admin-actions';
import { createIdempotentPosts } from './http/idempotency';
import { requireAdminKeyOrBasic } from './http/require-admin-key-or-basic';
import { requireBearer } from './http/require-bearer';
import { requireJsonBody } from './http/require-json-body';
import { answerTooManyFailedAttempts } from './http/too-many-failed-attempts';
import { createUserRoutes } from './http/user-scope';
import { requireEveryRouteDescribed } from './openapi/openapi-document';
import { createOpenApiRoutes } from './openapi/openapi-routes';
import { type AppWebhookRoutesDeps, createAppWebhookRoutes } from './routes/admin/app-webhook-routes';
import { createAuditRoutes } from './routes/admin/audit-routes';
import { createEventRoutes } from './routes/admin/event-routes';
import { createHoldAdminRoutes } from './routes/admin/hold-routes';
import { createLedgerAdminRoutes } from './routes/admin/ledger-routes';
import { createLotAdminRoutes } from './routes/admin/lot-routes';
import { createReconcileRoutes } from './routes/admin/reconcile-routes';
import { createUserSupportRoutes } from './routes/admin/user-support-routes';
import { createGrantRoutes } from './routes/v1/grant-routes';
import { createSpendingRoutes } from './routes/v1/spending-routes';
import { createStudioRoutes, type StudioRouteDeps } from './routes/v1/studio-routes';
import { createSubscriptionRoutes, type SubscriptionRoutesDeps } from './routes/v1/subscription-routes';
import { createTopupRoutes } from './routes/v1/topup-routes';
import { createWalletRoutes } from './routes/v1/wallet-routes';

export interface ApiAppDeps {
  db: Kysely<DB>;
  /**
   * How the api writes app webhook messages (studio debits, top-ups, subscription syncs): the
   * low-balance threshold, and with APP_WEBHOOK_URL the hand-off to the app-webhooks queue after commit.
   */
  outbox: AppWebhookOutbox;
  logger: Logger;
  metrics: ApiMetrics;
  appApiKeys: readonly string[];
  adminApiKeys: readonly string[];
  /** The failure-only limiter of the key checks (API_FAILED_AUTH_*); none when left out. */
  failedAuthLimit?: FailedAuthLimitSettings;
  enqueue: (inboxEventIds: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;
  /**
   * `not_configured` when APP_WEBHOOK_URL is unset: the console, the admin message routes and the
   * queue dashboard say messages are written, not delivered (default `on`).
   */
  appWebhookDelivery?: AppWebhookDelivery;
  /** Hands redelivered app webhook messages to their queue (the relay picks up what fails). */
  enqueueAppWebhooks: AppWebhookRoutesDeps['enqueueAppWebhooks'];
  readiness: Record<string, ReadinessCheck>;
  beforeScrape?: () => Promise<void>;
  /** Subscription reads and the on-demand RevenueCat sync; without it those routes answer 503. */
  subscriptions?: SubscriptionRoutesDeps['subscriptions'];
  /** AI Studio: catalog, clock and the studio queue hand-off. */
  studio: Omit<StudioRouteDeps, 'db' | 'outbox' | 'idempotency'>;
  /** Top-ups need the catalog and the Stripe API; without them those routes answer 503. */
  catalog?: Catalog;
  stripe?: StripeApi | undefined;
  /** The Redis connection and prefix the queue dashboard (/admin/queues) reads the catalog queues with. */
  queues: { connection: Redis; prefix: string };
  /** `Idempotency-Key` on /v1 POSTs: IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS (docs/idempotency.md). */
  idempotency: { lockTimeoutMs: number };
  /** Holds: HOLD_DEFAULT_TTL_SECONDS (default 900). */
  holds?: { defaultTtlSeconds: number };
  /** API_ANSWER_DEADLINE_MS: a /v1 call unanswered this long is answered 503 (none when unset). */
  answerDeadlineMs?: number;
}

export const dashboardPath = '/admin/queues';
export const consolePath = '/admin/console';

/**
 * The product-facing API under /v1 (app keys) and the operator API under /admin (admin keys),
 * with the queue dashboard at /admin/queues and the console at /admin/console (admin key as
 * bearer token or Basic auth password). Every state-changing admin request is audited.
 * Call `closeApiApp` on shutdown to release the dashboard's queue handles.
 */
export function createApiApp(deps: ApiAppDeps): Express {
  const dashboard = createQueueDashboard({
    connection: deps.queues.connection,
    prefix: deps.queues.prefix,
    basePath: dashboardPath,
    retryResets: {
      [queueCatalog.inbox.name]: createInboxRetryReset(deps.db),
      [queueCatalog.email.name]: createEmailRetryReset(deps.db),
    },
    notes: deps.appWebhookDelivery === 'not_configured' ? { [queueCatalog.appWebhooks.name]: notConfiguredNote } : {},
  });
  const app = createServiceApp({
    logger: deps.logger,
    routes: (app) => {
      app.use(
        createHealthRoutes({
          checks: deps.readiness,
          logger: deps.logger,
          registry: deps.metrics.registry,
          ...(deps.beforeScrape ? { beforeScrape: deps.beforeScrape } : {}),
        }),
      );
      app.use(express.json({ limit: '100kb' }));
      // The API described (no key): generated from the schemas the routes below parse and answer with.
      app.use(createOpenApiRoutes());

      // One failure-only limiter for every key check of this process (per client IP): a valid
      // key never reaches it, so it never slows a valid caller.
      // Only requests that sent a key reach it: one that sent none is challenged, never counted.
      const refuseFailedAuth = createFailedAuthLimiter(deps.failedAuthLimit, answerTooManyFailedAttempts);
      const v1 = express.Router();
      v1.use(requireBearer(deps.appApiKeys, 'app', refuseFailedAuth));
      v1.use(requireJsonBody);
      if (deps.answerDeadlineMs !== undefined) v1.use(answerDeadline(deps.answerDeadlineMs));
      // Every /v1 route is about one user and is mounted here, under /users/:userId, where the id
      // is resolved to its canonical user once; a new route belongs in one of these routers.
      // Every POST among them wraps its handler in `idempotency` (claimed, or inTransaction for a
      // one-transaction use case): its Idempotency-Key is kept under the id as the path names it.
      const idempotency = createIdempotentPosts({
        db: deps.db,
        metrics: deps.metrics,
        lockTimeoutMs: deps.idempotency.lockTimeoutMs,
      });
      const userRouters = [
        createWalletRoutes(deps),
        createSubscriptionRoutes({ ...deps, idempotency }),
        createStudioRoutes({ db: deps.db, outbox: deps.outbox, ...deps.studio, idempotency }),
        createTopupRoutes({ ...deps, idempotency }),
        createGrantRoutes({ ...deps, idempotency }),
        createSpendingRoutes({
          db: deps.db,
          outbox: deps.outbox,
          idempotency,
          catalog: deps.studio.catalog,
          clock: deps.studio.clock,
          ...(deps.holds ? { holdDefaultTtlSeconds: deps.holds.defaultTtlSeconds } : {}),
        }),
      ];
      idempotency.requireEveryPost(userRouters);
      requireEveryRouteDescribed('/v1/users/{userId}', userRouters);
      v1.use(createUserRoutes(deps.db, userRouters));
      app.use('/v1', v1);

      // Every state-changing admin request that passed the key check is audited (auditAdminActions).
      const audit = (surface: 'api' | 'console' | 'dashboard') => auditAdminActions({ db: deps.db, surface });
      app.use(
        dashboardPath,
        requireAdminKeyOrBasic(deps.adminApiKeys, refuseFailedAuth),
        audit('dashboard'),
        dashboard.router,
      );
      app.use(
        consolePath,
        consoleHeaders,
        requireAdminKeyOrBasic(deps.adminApiKeys, refuseFailedAuth),
        // The console's forms, parsed before the audit so a `started` row holds what was asked.
        express.urlencoded({ extended: false, limit: '10kb' }),
        audit('console'),
        createConsoleRoutes({
          db: deps.db,
          outbox: deps.outbox,
          enqueue: deps.enqueue,
          enqueueAppWebhooks: deps.enqueueAppWebhooks,
          ...(deps.appWebhookDelivery ? { appWebhookDelivery: deps.appWebhookDelivery } : {}),
          stripe: deps.stripe,
          queues: dashboard.queues,
        }),
      );

      const admin = express.Router();
      admin.use(requireBearer(deps.adminApiKeys, 'admin', refuseFailedAuth));
      // Before the audit: a body the routes cannot read is refused like a missing key, unrecorded.
      admin.use(requireJsonBody);
      admin.use(audit('api'));
      const adminRouters = [
        createAuditRoutes(deps),
        createEventRoutes(deps),
        createLedgerAdminRoutes(deps),
        createUserSupportRoutes(deps),
        createLotAdminRoutes(deps),
        createHoldAdminRoutes(deps),
        createReconcileRoutes(deps),
        createAppWebhookRoutes(deps),
      ];
      // Every route of /v1 and /admin is in GET /openapi.json (openapi/openapi-document.ts).
      requireEveryRouteDescribed('/admin', adminRouters);
      for (const router of adminRouters) admin.use(router);
      app.use('/admin', admin);

      // A database that cannot be reached (restart, failover) is a 503 the caller may retry, not a 500.
      app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
        // A GET that answers after its deadline's 503 (http/answer-deadline.ts): nothing to send.
        if (answeredAtDeadline(res)) {
          req.log.warn({ err: error, path: req.path }, 'answered after API_ANSWER_DEADLINE_MS');
          return;
        }
        if (!isDatabaseUnavailableError(error)) return next(error);
        req.log.warn({ err: error, path: req.path }, 'database unavailable');
        if (!res.headersSent) {
          sendError(res, 503, 'database_unavailable', 'the database cannot be reached right now; retry later');
        }
      });
    },
  });
  dashboards.set(app, dashboard);
  return app;
}

const dashboards = new WeakMap<Express, QueueDashboard>();

/** Closes what createApiApp opened besides the database and Redis connection it was given. */
export async function closeApiApp(app: Express): Promise<void> {
  await dashboards.get(app)?.close();
}
