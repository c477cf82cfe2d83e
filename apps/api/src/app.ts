import { type DB, queueCatalog } from '@tally/billing-core';
import {
  type ApiMetrics,
  createHealthRoutes,
  createServiceApp,
  type Logger,
  type ReadinessCheck,
} from '@tally/platform';
import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createQueueDashboard, type QueueDashboard } from './dashboard/create-queue-dashboard';
import { createInboxRetryReset } from './dashboard/inbox-retry-reset';
import { requireAdminKeyOrBasic } from './http/require-admin-key-or-basic';
import { requireBearer } from './http/require-bearer';
import { createEventRoutes } from './routes/admin/event-routes';
import { createLedgerAdminRoutes } from './routes/admin/ledger-routes';
import { createUserSupportRoutes } from './routes/admin/user-support-routes';
import { createWalletRoutes } from './routes/v1/wallet-routes';

export interface ApiAppDeps {
  db: Kysely<DB>;
  logger: Logger;
  metrics: ApiMetrics;
  appApiKeys: readonly string[];
  adminApiKeys: readonly string[];
  enqueue: (inboxEventIds: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;
  readiness: Record<string, ReadinessCheck>;
  beforeScrape?: () => Promise<void>;
  /** The Redis connection and prefix the queue dashboard (/admin/queues) reads the catalog queues with. */
  queues: { connection: Redis; prefix: string };
}

export const dashboardPath = '/admin/queues';

/**
 * The product-facing API under /v1 (app keys) and the operator API under /admin (admin keys),
 * with the queue dashboard at /admin/queues (admin key as bearer token or Basic auth password).
 * Call `closeApiApp` on shutdown to release the dashboard's queue handles.
 */
export function createApiApp(deps: ApiAppDeps): Express {
  const dashboard = createQueueDashboard({
    connection: deps.queues.connection,
    prefix: deps.queues.prefix,
    basePath: dashboardPath,
    retryResets: { [queueCatalog.inbox.name]: createInboxRetryReset(deps.db) },
  });
  const app = createServiceApp({
    logger: deps.logger,
    routes: (app) => {
      app.use(
        createHealthRoutes({
          checks: deps.readiness,
          registry: deps.metrics.registry,
          ...(deps.beforeScrape ? { beforeScrape: deps.beforeScrape } : {}),
        }),
      );
      app.use(express.json({ limit: '100kb' }));

      const v1 = express.Router();
      v1.use(requireBearer(deps.appApiKeys, 'app'));
      v1.use(createWalletRoutes(deps));
      app.use('/v1', v1);

      app.use(dashboardPath, requireAdminKeyOrBasic(deps.adminApiKeys), dashboard.router);

      const admin = express.Router();
      admin.use(requireBearer(deps.adminApiKeys, 'admin'));
      admin.use(createEventRoutes(deps));
      admin.use(createLedgerAdminRoutes(deps));
      admin.use(createUserSupportRoutes(deps));
      app.use('/admin', admin);
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
