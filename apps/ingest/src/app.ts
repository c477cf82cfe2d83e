import {
  createHealthRoutes,
  createServiceApp,
  type HttpFailure,
  type Logger,
  type ReadinessCheck,
} from '@tally/platform';
import type { Express } from 'express';
import { type IngestMetrics, providerLabelOf } from './ingest-metrics';
import { useWebhookRoutes, type WebhookRouteDeps } from './routes/webhook-routes';

export interface IngestAppDeps extends WebhookRouteDeps {
  logger: Logger;
  metrics: IngestMetrics;
  /** Checks that make /readyz fail. */
  readiness: Record<string, ReadinessCheck>;
  /** Reported only: a Redis outage must not take ingest out of the load balancer. */
  informationalReadiness?: Record<string, ReadinessCheck>;
}

/** The ingest HTTP app: webhooks plus health and metrics. No business logic lives here. */
export function createIngestApp(deps: IngestAppDeps): Express {
  const app = createServiceApp({
    logger: deps.logger,
    routes: (app) => {
      // Webhooks first, on the app itself: every webhook would otherwise walk the health router's
      // layers, or a router of its own.
      useWebhookRoutes(app, deps);
      app.use(
        createHealthRoutes({
          checks: deps.readiness,
          informationalChecks: deps.informationalReadiness ?? {},
          registry: deps.metrics.registry,
          logger: deps.logger,
        }),
      );
    },
    onFailure: (error, req, failure) => {
      const provider = providerLabelOf(req.path);
      deps.metrics.webhookRequests.inc({ provider, outcome: outcomeOf(failure) });
      // guard: ingest-refusal-log-request-logger
      if (failure.status >= 500) req.log.error({ err: error, path: req.path }, 'unexpected error');
      else if (failure.code === 'request_aborted')
        req.log.info({ path: req.path, provider }, 'client aborted the request');
      else req.log.warn({ path: req.path, code: failure.code }, 'request rejected');
    },
  });
  // No ETag on answers: a provider never revalidates a webhook answer, and Express would hash
  // every body (SHA-1) to make one.
  app.set('etag', false);
  return app;
}

/** The metrics outcome of a request that ended in the error handler. A client abort is not our error. */
function outcomeOf(failure: HttpFailure): string {
  if (failure.code === 'request_aborted') return 'aborted';
  if (failure.status === 413) return 'too_large';
  if (failure.status === 415) return 'unsupported_media_type';
  return failure.status >= 500 ? 'error' : 'bad_request';
}
