import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

const quietPaths = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One access-log line per request with only the request line, status and duration: headers carry
 * signatures and keys, bodies carry personal data. Probes and scrapes are not logged; 5xx answers
 * log at error, the rest at info. With info off, no access line at all (failures are still logged
 * by the services' error handlers).
 *
 * Hand-written rather than pino-http: that builds a child logger (serialising its bindings) for
 * every request even when the level drops the line, and nothing here uses a per-request logger.
 * When info is off (LOG_LEVEL=warn, as under load tests) a request costs one level check.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  let lastId = 0;
  return (req, res, next) => {
    if (!logger.isLevelEnabled('info') || quietPaths.has(req.path)) return next();
    lastId += 1;
    const id = lastId;
    const started = process.hrtime.bigint();
    const fields = () => ({
      req: { id, method: req.method, url: req.originalUrl },
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
    next();
  };
}
