import type { DB } from '@tally/billing-core';
import {
  createHealthRoutes,
  createRequestLogger,
  type IngestMetrics,
  jsonErrorHandler,
  type Logger,
  notFoundHandler,
  type ReadinessCheck,
} from '@tally/platform';
import express, { type Express } from 'express';
import type { Kysely } from 'kysely';
import { createWebhookRoutes, type WebhookRouteDeps } from './routes/webhook-routes';

export interface IngestAppDeps extends WebhookRouteDeps {
  db: Kysely<DB>;
  logger: Logger;
  metrics: IngestMetrics;
  /** Checks that make /readyz fail. */
  readiness: Record<string, ReadinessCheck>;
  /** Reported only: a Redis outage must not take ingest out of the load balancer. */
  informationalReadiness?: Record<string, ReadinessCheck>;
}

/** The ingest HTTP app: webhooks plus health and metrics. No business logic lives here. */
export function createIngestApp(deps: IngestAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(createRequestLogger(deps.logger));
  app.use(
    createHealthRoutes({
      checks: deps.readiness,
      informationalChecks: deps.informationalReadiness ?? {},
      registry: deps.metrics.registry,
    }),
  );
  app.use(createWebhookRoutes(deps));
  app.use(notFoundHandler);
  app.use(
    jsonErrorHandler((error, req, failure) => {
      const provider = req.path.includes('stripe') ? 'stripe' : req.path.includes('revenuecat') ? 'revenuecat' : 'none';
      const outcome = failure.status === 413 ? 'too_large' : failure.status === 500 ? 'error' : 'bad_request';
      deps.metrics.webhookRequests.inc({ provider, outcome });
      if (failure.status === 500) deps.logger.error({ err: error, path: req.path }, 'unexpected error');
      else deps.logger.warn({ path: req.path, code: failure.code }, 'request rejected');
    }),
  );
  return app;
}
