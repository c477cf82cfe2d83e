import { type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { withTimeout } from '../lifecycle/with-timeout';

export type ReadinessCheck = () => Promise<void>;

/**
 * What /readyz says about one dependency: a fixed code, never the dependency's own error text
 * (host names, addresses, user names); that goes to the log at warn, with the check's name.
 */
export type ReadinessResult = 'ok' | 'timeout' | 'unavailable';

/**
 * GET /healthz (the process is alive), GET /readyz (every dependency answers; 503 naming the
 * ones that do not, each with a ReadinessResult code) and GET /metrics (Prometheus text). `beforeScrape` refreshes gauges that are
 * read on demand.
 */
export function createHealthRoutes(options: {
  checks: Record<string, ReadinessCheck>;
  /** Reported by /readyz but never make it fail (ingest stays ready without Redis: the relay covers it). */
  informationalChecks?: Record<string, ReadinessCheck>;
  registry: Registry;
  beforeScrape?: () => Promise<void>;
  checkTimeoutMs?: number;
  /** Where a failed check's own error goes (the answer carries only its code). */
  logger?: Logger;
}): Router {
  const router = Router();
  const timeoutMs = options.checkTimeoutMs ?? 2_000;
  const timeoutMessage = `readiness check did not answer within ${timeoutMs} ms`;
  router.get('/healthz', (_req: Request, res: Response) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (req: Request, res: Response) => {
    const run = (checks: Record<string, ReadinessCheck>) =>
      Promise.all(
        Object.entries(checks).map(async ([name, check]) => {
          try {
            await withTimeout(check(), timeoutMs, timeoutMessage);
            return [name, 'ok' as ReadinessResult] as const;
          } catch (error) {
            const timedOut = error instanceof Error && error.message === timeoutMessage;
            const result: ReadinessResult = timedOut ? 'timeout' : 'unavailable';
            // Through the request's logger (its requestId) in a createServiceApp app.
            if (options.logger)
              // guard: readiness-log-request-logger
              (req.log ?? options.logger).warn({ err: error, check: name, result }, 'readiness check failed');
            return [name, result] as const;
          }
        }),
      );
    const [gating, informational] = await Promise.all([run(options.checks), run(options.informationalChecks ?? {})]);
    const ready = gating.every(([, result]) => result === 'ok');
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries([...gating, ...informational]) });
  });
  router.get('/metrics', async (_req: Request, res: Response) => {
    try {
      await options.beforeScrape?.();
    } catch {
      // A gauge that cannot be refreshed keeps its last value; the rest of the scrape still matters.
    }
    res.type(options.registry.contentType).send(await options.registry.metrics());
  });
  return router;
}
