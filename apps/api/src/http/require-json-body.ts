import { sendError } from '@tally/platform';
import type { NextFunction, Request, Response } from 'express';

/** The media type every body of /v1 and /admin is read as (express.json's default). */
export const jsonMediaType = 'application/json';

/**
 * 415 `unsupported_media_type` for a request that carries a body in another media type (curl's
 * `-d` alone sends `application/x-www-form-urlencoded`). express.json leaves such a body unread,
 * so without this the route would judge an empty body and answer about its first missing field
 * ("amount: expected number, received undefined"), which sends the caller looking at the wrong
 * thing. GET, HEAD and OPTIONS are not checked (no route reads their body). A request without a body (no Content-Length or 0, no Transfer-Encoding) passes: the
 * routes that take none may be called bare.
 */
export function requireJsonBody(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
    next();
    return;
  }
  const length = req.get('content-length');
  const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length.trim() !== '0');
  if (!hasBody || req.is(jsonMediaType)) {
    next();
    return;
  }
  const sent = req.get('content-type');
  sendError(
    res,
    415,
    'unsupported_media_type',
    `the body must be JSON sent with Content-Type: ${jsonMediaType}${sent ? ` (this request sent ${JSON.stringify(sent.slice(0, 100))})` : ' (this request sent none)'}`,
  );
}
