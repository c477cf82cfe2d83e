import express, { type Express, type Request } from 'express';
import type { Logger } from 'pino';
import { type HttpFailure, jsonErrorHandler, notFoundHandler } from './json-errors';
import { createRequestLogger } from './request-logger';

export type FailureReporter = (error: unknown, req: Request, failure: HttpFailure) => void;

/**
 * The frame every Tally HTTP process shares, so no port answers in Express's HTML: no
 * x-powered-by header, one access-log line per request, the process's routes, then the JSON 404
 * for unknown routes and the JSON error handler last.
 *
 * `onFailure` hears about every error that reached the handler (metrics, logs). Without it, only
 * unexpected ones (500) are logged; a client's own mistakes show in the access log.
 */
export function createServiceApp(options: {
  logger: Logger;
  routes: (app: Express) => void;
  onFailure?: FailureReporter;
}): Express {
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.use(createRequestLogger(logger));
  options.routes(app);
  app.use(notFoundHandler);
  app.use(
    jsonErrorHandler(
      options.onFailure ??
        ((error, req, failure) => {
          if (failure.status >= 500) logger.error({ err: error, path: req.path }, 'unexpected error');
        }),
    ),
  );
  return app;
}
