import {
  type CaptureHoldResult,
  type CapturePricedHoldResult,
  type DebitRequest,
  debitTokensTogether,
  type HoldOperation,
  holdOperationsTogether,
  type PlaceHoldResult,
  preparePricedPlacement,
  queueCatalog,
  recordUsagesTogether,
  type UsageRequest,
} from '@tally/billing-core';
import {
  createFailedAuthLimiter,
  createHealthRoutes,
  createServiceApp,
  type FailedAuthLimitSettings,
  isDatabaseUnavailableError,
  type Logger,
  type ReadinessCheck,
} from '@tally/platform';
import { createTransactionBatcher, type TransactionBatcherSettings } from '@tally/platform/db';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { ApiMetrics } from './api-metrics';
import { notConfiguredNote } from './app-webhook-delivery';
import { consoleHeaders, createConsoleRoutes } from './console/create-console-routes';
import { createQueueDashboard, type QueueDashboard } from './dashboard/create-queue-dashboard';
import { createEmailRetryReset, createInboxRetryReset } from './dashboard/retry-resets';
import { databaseUnavailableAnswer, sendAnswer } from './http/answer';
import { answerDeadline, answeredAtDeadline } from './http/answer-deadline';
import { auditUnmatched } from './http/audit-admin-actions';
import { createIdempotentPosts } from './http/idempotency';
import { mountRoutes } from './http/mount-routes';
import { requireAdminKeyOrBasic } from './http/require-admin-key-or-basic';
import { requireBearer } from './http/require-bearer';
import { requireJsonBody } from './http/require-json-body';
import type { RouteServices } from './http/route-services';
import { answerTooManyFailedAttempts } from './http/too-many-failed-attempts';
import { createUserRoutes } from './http/user-scope';
import { createOpenApiRoutes } from './openapi/openapi-routes';
import { adminRoutes, userRoutes } from './routes/api-routes';

/** What createApiApp needs: the routes' services (http/route-services.ts, the debit batcher it makes) and the app's own. */
export interface ApiAppDeps extends Omit<RouteServices, SpendBatcherServices> {
  /**
   * How concurrent debits share transactions (SPEND_BATCH_MAX_DEBITS, SPEND_BATCH_TRANSACTIONS;
   * platform's createTransactionBatcher): `maxItems` 1 runs every debit in its own.
   */
  spendBatch?: TransactionBatcherSettings;
  logger: Logger;
  metrics: ApiMetrics;
  appApiKeys: readonly string[];
  adminApiKeys: readonly string[];
  /** The failure-only limiter of the key checks (API_FAILED_AUTH_*); none when left out. */
  failedAuthLimit?: FailedAuthLimitSettings;
  readiness: Record<string, ReadinessCheck>;
  beforeScrape?: () => Promise<void>;
  /** The Redis connection and prefix the queue dashboard (/admin/queues) reads the catalog queues with. */
  queues: { connection: Redis; prefix: string };
  /** `Idempotency-Key` on /v1 POSTs: IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS (docs/idempotency.md). */
  idempotency: { lockTimeoutMs: number };
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
    db: deps.db,
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
      // guard: api-answer-deadline
      if (deps.answerDeadlineMs !== undefined) v1.use(answerDeadline(deps.answerDeadlineMs));
      // Every /v1 route is about one user: defined in routes/v1 and listed in routes/api-routes.ts,
      // mounted under /users/:userId, where the id is resolved to its canonical user once. A POST
      // keeps its Idempotency-Key as its definition says, under the id as the path names it.
      const idempotency = createIdempotentPosts({
        db: deps.db,
        metrics: deps.metrics,
        lockTimeoutMs: deps.idempotency.lockTimeoutMs,
      });
      const services: RouteServices = { ...deps, ...createSpendBatchers(deps) };
      const mount = { services, idempotency, db: deps.db };
      v1.use(createUserRoutes(deps.db, [mountRoutes(userRoutes, mount)]));
      app.use('/v1', v1);

      // Every state-changing admin request that passed the key check is audited: the admin API's
      // as its definition says, the console's and the dashboard's actions as they say, and one no
      // route took as such (auditUnmatched).
      app.use(dashboardPath, requireAdminKeyOrBasic(deps.adminApiKeys, refuseFailedAuth), dashboard.router);
      app.use(
        consolePath,
        consoleHeaders,
        requireAdminKeyOrBasic(deps.adminApiKeys, refuseFailedAuth),
        // The console's forms, parsed before the audit so a `started` row holds what was asked.
        express.urlencoded({ extended: false, limit: '10kb' }),
        createConsoleRoutes({
          db: deps.db,
          outbox: deps.outbox,
          enqueue: deps.enqueue,
          enqueueAppWebhooks: deps.enqueueAppWebhooks,
          ...(deps.appWebhookDelivery ? { appWebhookDelivery: deps.appWebhookDelivery } : {}),
          stripe: deps.stripe,
          queues: dashboard.queues,
          spendLimits: deps.spendLimits,
        }),
      );

      const admin = express.Router();
      admin.use(requireBearer(deps.adminApiKeys, 'admin', refuseFailedAuth));
      // Before the routes and their audit: a body they cannot read is refused like a missing key, unrecorded.
      admin.use(requireJsonBody);
      admin.use(mountRoutes(adminRoutes, mount));
      admin.use(auditUnmatched(deps.db, 'api'));
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
        sendAnswer(res, databaseUnavailableAnswer);
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

/** The spend batch's defaults (SPEND_BATCH_MAX_DEBITS, SPEND_BATCH_TRANSACTIONS; docs/configuration.md). */
export const defaultSpendBatch: TransactionBatcherSettings = { maxItems: 32, maxTransactions: 2 };

/** The services createSpendBatchers makes. */
type SpendBatcherServices =
  | 'debit'
  | 'recordUsage'
  | 'placeHold'
  | 'captureHold'
  | 'placePricedHold'
  | 'capturePricedHold';

/**
 * The app's debits, usages and holds' placements and captures (by amount and by estimate),
 * coalesced (one batcher per kind; placements and captures share one): a spend starts its transaction at once while fewer
 * than `maxTransactions` of its kind are open, else it waits and goes with the others that
 * waited, in one (debitTokensTogether, recordUsagesTogether, holdOperationsTogether: each
 * answered as it would be answered alone).
 */
function createSpendBatchers(deps: ApiAppDeps): Pick<RouteServices, SpendBatcherServices> {
  const settings = deps.spendBatch ?? defaultSpendBatch;
  const unitDeps = { db: deps.db, outbox: deps.outbox, spendLimits: deps.spendLimits };
  const usageDeps = { ...unitDeps, clock: deps.studio.clock, catalog: deps.studio.catalog };
  // A hold by estimate's free allowance is decided on the studio's clock, as a usage's.
  const holdDeps = { ...unitDeps, clock: deps.studio.clock };
  const holdOperation = createTransactionBatcher(
    (operations: HoldOperation[]) => holdOperationsTogether(holdDeps, operations),
    settings,
  );
  return {
    debit: createTransactionBatcher((requests: DebitRequest[]) => debitTokensTogether(unitDeps, requests), settings),
    recordUsage: createTransactionBatcher(
      (requests: UsageRequest[]) => recordUsagesTogether(usageDeps, requests),
      settings,
    ),
    // A placement answers a placement's result, a capture a capture's (holdOperationsTogether keeps each kind's).
    placeHold: (placement) => holdOperation({ kind: 'place', placement }) as Promise<PlaceHoldResult>,
    captureHold: (request) => holdOperation({ kind: 'capture', request }) as Promise<CaptureHoldResult>,
    // A hold by estimate is priced before the batch: an unknown feature or a bad quantity never waits for it.
    placePricedHold: async (request) => {
      const prepared = preparePricedPlacement(deps.studio.catalog, request);
      if ('result' in prepared) return prepared.result;
      return (await holdOperation({ kind: 'place-priced', placement: prepared })) as PlaceHoldResult;
    },
    capturePricedHold: (request) =>
      holdOperation({ kind: 'capture-priced', request }) as Promise<CapturePricedHoldResult>,
  };
}
