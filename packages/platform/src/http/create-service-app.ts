import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { type HttpFailure, jsonErrorHandler, notFoundHandler, sendError } from './json-errors';
import { assignRequestId, bindRequestLog } from './request-id';
import { createAccessLog } from './request-logger';

/**
 * helmet's defaults, whose CSP lets the Bull Board dashboard run (its scripts and styles come
 * from its own origin, its inline styles are allowed by helmet's `style-src`, its fonts come over
 * https), except `upgrade-insecure-requests`: TLS ends in front of these processes, and on a
 * plain-http origin (local runs, the tests) the upgrade would send the dashboard's own requests
 * to an https port that does not exist.
 */
export const securityHeadersMiddleware: RequestHandler = helmet({
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null, frameAncestors: ["'self'"] } },
  xFrameOptions: { action: 'sameorigin' },
});

/**
 * The headers a middleware sets when none of them depends on the request (helmet's, with no
 * nonce or function directive), captured once against a stand-in response. Must not be used
 * for a middleware that reads the request or answers it.
 */
export function staticHeadersOf(middleware: RequestHandler): ReadonlyArray<readonly [string, string]> {
  const headers = new Map<string, string>();
  const stand = {
    setHeader(name: string, value: unknown) {
      headers.set(name, String(value));
      return stand;
    },
    removeHeader(name: string) {
      headers.delete(name);
    },
  };
  let passed = false;
  middleware({} as Request, stand as unknown as Response, (error?: unknown) => {
    if (error) throw error;
    passed = true;
  });
  if (!passed) throw new Error('the security-header middleware did not pass the request on synchronously');
  return [...headers];
}

/**
 * A NUL (`%00`) anywhere in the URL (a path id, a query value) can never name anything: Postgres
 * text cannot hold it, and a query with one would fail as a 500. Refused as the caller's mistake.
 */
function hasNulInUrl(req: Request): boolean {
  return /%00/i.test(req.originalUrl);
}

/**
 * What every request gets before its route, in ONE middleware (each Express layer costs every
 * request a router step): its id and `Request-Id` header, helmet's headers from a list built once
 * (helmet itself runs a dozen middleware functions per request and builds the CSP text anew each
 * time, for headers that never change), its access-log line, and the refusal of a NUL in the URL.
 */
function frameEachRequest(logger: Logger): RequestHandler {
  const headers = staticHeadersOf(securityHeadersMiddleware);
  const logAccess = createAccessLog(logger);
  return (req, res, next) => {
    assignRequestId(req, res);
    for (const [name, value] of headers) res.setHeader(name, value);
    logAccess(req, res);
    if (hasNulInUrl(req)) {
      sendError(res, 400, 'invalid_request', 'the URL contains a NUL (%00) character');
      return;
    }
    next();
  };
}

export type FailureReporter = (error: unknown, req: Request, failure: HttpFailure) => void;

/**
 * The frame every Tally HTTP process shares, so no port answers in Express's HTML: no
 * x-powered-by header, helmet's security headers on every answer (`X-Content-Type-Options:
 * nosniff`; HTML can be framed only by its own origin: CSP `frame-ancestors 'self'` and
 * `X-Frame-Options: SAMEORIGIN`, because a framed dashboard defeats the same-origin check on its
 * buttons), a `Request-Id` on every answer with `req.log` bound to it (request-id.ts), one
 * access-log line per request, the process's routes, then the JSON 404 for unknown routes and the
 * JSON error handler last. Handlers log about their request through `req.log`.
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
  bindRequestLog(app, logger);
  app.use(frameEachRequest(logger));
  options.routes(app);
  app.use(notFoundHandler);
  app.use(
    jsonErrorHandler(
      options.onFailure ??
        ((error, req, failure) => {
          // guard: error-log-request-logger
          if (failure.status >= 500) req.log.error({ err: error, path: req.path }, 'unexpected error');
        }),
    ),
  );
  return app;
}
