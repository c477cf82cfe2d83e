import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const quietPaths = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One access-log line per request with only the request line and status: headers carry
 * signatures and keys, bodies carry personal data. Probes and scrapes are not logged.
 */
export function createRequestLogger(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    autoLogging: { ignore: (req) => quietPaths.has(req.url ?? '') },
  });
}
