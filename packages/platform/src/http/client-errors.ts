import type { Socket } from 'node:net';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../logging/create-logger';
import { createWindowedWarn } from '../logging/windowed-warn';

/**
 * Why Node's HTTP layer ended a connection before the app saw a request (its `clientError`):
 * the headers or the whole request not received within HTTP_HEADERS_TIMEOUT_MS /
 * HTTP_REQUEST_TIMEOUT_MS (a slow client, or a starved process that did not read them in time),
 * headers over Node's size limit, bytes that are not HTTP, or the connection failing (a reset, or
 * the client closing mid-request).
 */
export type ClientErrorReason = 'request_timeout' | 'headers_too_large' | 'malformed' | 'connection_error';

export const clientErrorReasons: readonly ClientErrorReason[] = [
  'request_timeout',
  'headers_too_large',
  'malformed',
  'connection_error',
];

function reasonOf(error: NodeJS.ErrnoException): ClientErrorReason {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  if (error.code === 'HPE_HEADER_OVERFLOW' || error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW')
    return 'headers_too_large';
  // The client closing mid-request (EOF where the parser expected more) is a connection error.
  if (error.code === 'HPE_INVALID_EOF_STATE') return 'connection_error';
  if (typeof error.code === 'string' && error.code.startsWith('HPE_')) return 'malformed';
  return 'connection_error';
}

const answers: Record<string, Buffer> = {
  ERR_HTTP_REQUEST_TIMEOUT: Buffer.from('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n', 'ascii'),
  HPE_HEADER_OVERFLOW: Buffer.from(
    'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
    'ascii',
  ),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: Buffer.from('HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n', 'ascii'),
};
const badRequest = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'ascii');

/**
 * The server's `clientError` listener: answers exactly as Node does without one (408, 431, 413 or
 * 400 with `Connection: close`, unless an answer was already started on that socket, then the
 * socket is destroyed) and tells `report` why, so these answers (which never reach the app, its
 * request logger or its metrics) are counted and logged.
 */
export function clientErrorListener(report: (reason: ClientErrorReason) => void) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    report(reasonOf(error));
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
      socket.write(answers[error.code ?? ''] ?? badRequest);
    }
    socket.destroy(error);
  };
}

/** `tally_http_client_errors_total{reason}`, each reason at zero: every service's HTTP server has it. */
export function createClientErrorCounter(registry: Registry) {
  const counter = new Counter({
    name: 'tally_http_client_errors_total',
    help: "Connections Node's HTTP layer answered or closed before the app saw a request, by reason",
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of clientErrorReasons) counter.inc({ reason }, 0);
  return counter;
}
export type ClientErrorCounter = ReturnType<typeof createClientErrorCounter>;

/**
 * Counts Node's client errors in the service's `tally_http_client_errors_total{reason}` and logs
 * them: a warn for the first, then at most one line per `windowMs` with how many of each reason
 * happened in it (a storm of 408s is one line per window, not one per connection). Connection
 * errors (a client resetting or leaving mid-request) are counted, not logged.
 */
export function createClientErrorReporter(options: { counter: ClientErrorCounter; logger: Logger; windowMs?: number }) {
  const warn = createWindowedWarn(
    options.logger,
    'HTTP requests ended by the server before the app saw them (timeouts: slow clients or a starved process)',
    options.windowMs === undefined ? {} : { windowMs: options.windowMs },
  );
  return (reason: ClientErrorReason): void => {
    options.counter.inc({ reason });
    if (reason !== 'connection_error') warn(reason);
  };
}
