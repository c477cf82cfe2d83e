import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { ConfigError } from '../config/env';
import { type ClientErrorReason, clientErrorListener } from './client-errors';

export interface RunningServer {
  server: Server;
  port: number;
  /** Stops accepting connections and closes idle keep-alive sockets; waits for in-flight requests. */
  close(): Promise<void>;
}

export interface HttpServerOptions {
  /** Interface to listen on. Default `0.0.0.0`. */
  host?: string;
  /**
   * Time a client has to send the complete request headers before the socket is answered 408
   * and closed. Default 10 000 ms: a client that never finishes its headers must not hold a
   * socket (and a file descriptor) for minutes.
   */
  headersTimeoutMs?: number;
  /**
   * Time a client has to send the whole request, headers and body. Default 30 000 ms: webhook
   * bodies are at most a megabyte, and providers give up on us well before Node's 300 s default.
   * Must not be shorter than the headers timeout.
   */
  requestTimeoutMs?: number;
  /**
   * How long an idle keep-alive connection stays open. Default 5 000 ms, so shutdown does not wait
   * on connections providers keep open.
   */
  keepAliveTimeoutMs?: number;
  /**
   * Told why Node's HTTP layer answered or closed a connection before the app saw a request
   * (408 at the timeouts above, 431, 400, a reset); the answers stay Node's own. See
   * createClientErrorReporter, which counts and logs them.
   */
  onClientError?: (reason: ClientErrorReason) => void;
}

export const defaultHttpServerTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
} as const;

/**
 * Node's request and response constructors for `app`: every request and response is born with
 * Express's prototype for it (`app.request`, `app.response`; still an IncomingMessage and a
 * ServerResponse underneath), so the `Object.setPrototypeOf` Express applies to each of them on
 * arrival finds it in place and changes nothing.
 *
 * Changing an object's prototype after it was built is what that call costs: on Node 20 every
 * response then got a hidden class (map) of its own, and whole requests (their parse trees, bodies,
 * router closures) survived young-generation collections they were long done by, to be promoted
 * and left to full collections. A bare Express endpoint answered about three times slower than the
 * same endpoint with these constructors, and ingest spent most of its collection time on it
 * (infra/README.md, "How the processes scale"; measured in bench/experiments.md at commit 8899a13,
 * "Express's prototype swap").
 */
export function expressMessageConstructors(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  // Ordinary constructors whose `prototype` is Express's, running Node's own on the new object
  // (plain functions, not classes, on Node 20 and 24; were they classes, every request would fail
  // here, and startHttpServer's construction test with it). Built by `new`, consecutive responses
  // share one map (0 of 3,000 differed); through Reflect.construct with a `new.target`, each had
  // a map of its own again (2,999 of 3,000).
  const NodeRequest = IncomingMessage as unknown as (this: unknown, ...args: unknown[]) => void;
  const NodeResponse = ServerResponse as unknown as (this: unknown, ...args: unknown[]) => void;
  function Request(this: unknown, ...args: unknown[]) {
    NodeRequest.apply(this, args);
  }
  Request.prototype = app.request;
  function Response(this: unknown, ...args: unknown[]) {
    NodeResponse.apply(this, args);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}

/**
 * Starts an HTTP server for an Express app with timeouts for slow clients. `options` may be a
 * host name (the former third argument).
 *
 * Node enforces the headers and request timeouts only when it sweeps its connections, every
 * `connectionsCheckingInterval` (default 30 s), so a 10 s headers timeout could let a stalled
 * client sit for 40 s. The sweep here runs at a quarter of the shorter timeout (between 250 ms
 * and 5 s), so a stalled client is dropped within about 1.25 times the timeout.
 *
 * Rejects with ConfigError when the headers timeout exceeds the request timeout (Node refuses that).
 */
export function startHttpServer(
  app: Express,
  port: number,
  options: HttpServerOptions | string = {},
): Promise<RunningServer> {
  const settings = typeof options === 'string' ? { host: options } : options;
  const host = settings.host ?? '0.0.0.0';
  const headersTimeout = settings.headersTimeoutMs ?? defaultHttpServerTimeouts.headersTimeoutMs;
  const requestTimeout = settings.requestTimeoutMs ?? defaultHttpServerTimeouts.requestTimeoutMs;
  const keepAliveTimeout = settings.keepAliveTimeoutMs ?? defaultHttpServerTimeouts.keepAliveTimeoutMs;
  if (headersTimeout > requestTimeout) {
    return Promise.reject(
      new ConfigError(
        `invalid configuration:\n  - HTTP_HEADERS_TIMEOUT_MS (${headersTimeout}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${requestTimeout})`,
      ),
    );
  }
  const connectionsCheckingInterval = Math.min(5_000, Math.max(250, Math.floor(headersTimeout / 4)));
  return new Promise((resolve, reject) => {
    let closing = false;
    const server = createServer(
      {
        headersTimeout,
        requestTimeout,
        keepAliveTimeout,
        connectionsCheckingInterval,
        // guard: http-message-constructors
        ...expressMessageConstructors(app),
      },
      app,
    );
    // Before the app sees the request, so the header is set before any answer is written.
    server.prependListener('request', (_req, res) => {
      if (closing && !res.headersSent) res.setHeader('connection', 'close');
    });
    // guard: http-client-error-listener
    if (settings.onClientError) server.on('clientError', clientErrorListener(settings.onClientError));
    server.once('error', reject);
    server.once('listening', () => {
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            // A client under load keeps its keep-alive connections busy, so they never turn idle
            // and close() would wait for the shutdown deadline. From now on every answer says
            // `Connection: close`, and sockets are closed as soon as they fall idle; in-flight
            // requests still finish and get their answer.
            closing = true;
            const sweep = setInterval(() => server.closeIdleConnections(), 100);
            server.close(() => {
              clearInterval(sweep);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
    server.listen(port, host);
  });
}
