import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

const quietPaths = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One access-log line per request with only the request line, status and duration: headers carry
 * signatures and keys, bodies carry personal data. Probes and scrapes are not logged; 5xx answers
 * log at error, the rest at info. With info off, no access line at all (failures are still logged
 * by the services' error handlers).
 *
 * The line carries the request's `requestId` (request-id.ts), as every line logged through
 * `req.log` does.
 *
 * Hand-written rather than pino-http: that builds a child logger (serialising its bindings) for
 * every request even when the level drops the line; `req.log` is built only when a line is written.
 * When info is off (LOG_LEVEL=warn, as under load tests) a request costs one level check.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  const logAccess = createAccessLog(logger);
  return (req, res, next) => {
    logAccess(req, res);
    next();
  };
}

/** The access log of createRequestLogger as a plain step (no `next`), for a frame that runs several. */
export function createAccessLog(logger: Logger): (req: Request, res: Response) => void {
  return (req, res) => {
    if (!logger.isLevelEnabled('info') || quietPaths.has(req.path)) return;
    const started = process.hrtime.bigint();
    const fields = () => ({
      // guard: access-log-request-id
      requestId: req.requestId,
      req: { method: req.method, url: req.originalUrl },
      res: { statusCode: res.statusCode },
      responseTimeMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
    });
    let finished = false;
    res.once('finish', () => {
      finished = true;
      if (res.statusCode >= 500) logger.error(fields(), 'request errored');
      else logger.info(fields(), 'request completed');
    });
    res.once('close', () => {
      if (!finished) logger.info(fields(), 'request aborted');
    });
  };
}
