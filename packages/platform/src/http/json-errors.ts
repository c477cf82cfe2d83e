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

/** Codes for the body-parser (raw-body) error types a client can cause, by `type`. */
const clientErrorCodes: Record<string, { code: string; message: string }> = {
  'entity.too.large': { code: 'payload_too_large', message: 'request body is too large' },
  'entity.parse.failed': { code: 'malformed_json', message: 'request body is not valid JSON' },
  'encoding.unsupported': { code: 'unsupported_encoding', message: 'request body encoding is not supported' },
  'charset.unsupported': { code: 'unsupported_encoding', message: 'request body encoding is not supported' },
  'request.aborted': { code: 'request_aborted', message: 'the client aborted the request' },
  'request.size.invalid': { code: 'invalid_content_length', message: 'request body does not match Content-Length' },
  'entity.verify.failed': { code: 'forbidden', message: 'request body was refused' },
};

/** Socket errors that mean the client went away while its body was being read. */
const abortCodes = new Set(['ECONNABORTED', 'ECONNRESET', 'EPIPE']);

function statusOf(error: { status?: unknown; statusCode?: unknown }): number | null {
  const status = typeof error.status === 'number' ? error.status : error.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : null;
}

const codesByStatus: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  411: 'length_required',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/**
 * Maps an error that reached the last handler to an answer. An error that says it is the
 * client's keeps its status with a stable code: http-errors (which body-parser, raw-body and
 * Express's router use) marks those `expose: true`, and every body-parser `type` is recognised
 * too. A client that went away mid-body is `request_aborted`. A bare 4xx `status`/`statusCode`
 * is not trusted on its own: a Stripe SDK error carries the *upstream* status (a 404 from
 * Stripe's API is our failure, not the caller's). Everything else is an unexpected 500.
 * Messages are fixed strings, never the error's own text, which can quote the body.
 */
export function toHttpFailure(error: unknown): HttpFailure {
  const internal = { status: 500, code: 'internal_error', message: 'internal error' };
  if (error === null || typeof error !== 'object') return internal;
  const details = error as { type?: unknown; code?: unknown; expose?: unknown; status?: unknown; statusCode?: unknown };
  const status = statusOf(details);
  if (status === null) return internal;
  const known = typeof details.type === 'string' ? clientErrorCodes[details.type] : undefined;
  if (known && status < 500) return { status, ...known };
  if (details.expose !== true) return internal;
  if (typeof details.code === 'string' && abortCodes.has(details.code)) {
    return { status, code: 'request_aborted', message: 'the client aborted the request' };
  }
  return {
    status,
    code: codesByStatus[status] ?? (status < 500 ? 'client_error' : 'server_error'),
    message: 'request could not be processed',
  };
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
