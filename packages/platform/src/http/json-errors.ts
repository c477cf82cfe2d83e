import type { NextFunction, Request, Response } from 'express';

/** The one error shape every Tally HTTP answer uses: {"error":{"code","message"}}. */
export function sendError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

export interface HttpFailure {
  status: number;
  code: string;
  message: string;
}

/** Body-parser failures map to the documented answers; anything else is an unexpected 500. */
export function toHttpFailure(error: unknown): HttpFailure {
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.too.large')
    return { status: 413, code: 'payload_too_large', message: 'request body is too large' };
  if (type === 'entity.parse.failed')
    return { status: 400, code: 'malformed_json', message: 'request body is not valid JSON' };
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return { status: 415, code: 'unsupported_encoding', message: 'request body encoding is not supported' };
  }
  return { status: 500, code: 'internal_error', message: 'internal error' };
}

/**
 * The last Express error handler: answers in the JSON error shape without echoing the body or a
 * stack, after telling `report` (logs, metrics) what happened.
 */
export function jsonErrorHandler(report: (error: unknown, req: Request, failure: HttpFailure) => void) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const failure = toHttpFailure(error);
    report(error, req, failure);
    if (!res.headersSent) sendError(res, failure.status, failure.code, failure.message);
  };
}

export function notFoundHandler(_req: Request, res: Response): void {
  sendError(res, 404, 'not_found', 'no such route');
}
