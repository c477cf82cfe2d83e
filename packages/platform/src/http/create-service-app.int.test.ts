import { once } from 'node:events';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import pino from 'pino';
import { ConfigError } from '../config/env';
import { createServiceApp, securityHeadersMiddleware, staticHeadersOf } from './create-service-app';
import { type HttpFailure, toHttpFailure } from './json-errors';
import { defaultHttpServerTimeouts, type RunningServer, startHttpServer } from './start-http-server';

/**
 * Real requests against a real server on a loopback port: the errors toHttpFailure sees are the
 * ones express.raw/express.json (body-parser, raw-body) build, not hand-made look-alikes.
 */
describe('service app answers', () => {
  let running: RunningServer;
  const failures: Array<{ failure: HttpFailure; error: unknown }> = [];
  let failed: Promise<void> = Promise.resolve();
  let signalFailure: () => void = () => undefined;

  beforeAll(async () => {
    const app = createServiceApp({
      logger: pino({ level: 'silent' }),
      routes: (service) => {
        service.post('/raw', express.raw({ type: 'application/json', limit: 64 }), (_req, res) => {
          res.json({ ok: true });
        });
        service.post('/json', express.json({ limit: 64 }), (_req, res) => {
          res.json({ ok: true });
        });
        service.get('/boom', () => {
          throw new Error('a bug, with a secret in its message');
        });
        service.get('/upstream', () => {
          // What a Stripe SDK error looks like: the *upstream* status, not the caller's fault.
          throw Object.assign(new Error('No such payment_intent'), {
            statusCode: 404,
            type: 'StripeInvalidRequestError',
          });
        });
      },
      onFailure: (error, _req, failure) => {
        failures.push({ error, failure });
        signalFailure();
      },
    });
    running = await startHttpServer(app, 0, { host: '127.0.0.1' });
  });
  afterAll(() => running.close());
  beforeEach(() => {
    failures.length = 0;
    failed = new Promise<void>((resolve) => {
      signalFailure = resolve;
    });
  });

  const url = (path: string) => `http://127.0.0.1:${running.port}${path}`;

  it('sends nosniff and refuses framing by other sites on every answer: a route, a 404, a client error, a 500', async () => {
    const answers = [
      await fetch(url('/json'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
      await fetch(url('/nope')),
      await fetch(url('/json'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
      await fetch(url('/boom')),
    ];
    expect(answers.map((response) => response.status)).toEqual([200, 404, 400, 500]);
    for (const response of answers) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
      await response.body?.cancel();
    }
  });
  async function answer(response: Response) {
    return { status: response.status, body: await response.json(), poweredBy: response.headers.get('x-powered-by') };
  }

  it("sends exactly helmet's headers, as helmet itself sets them per request", async () => {
    const plain = express();
    plain.disable('x-powered-by');
    plain.use(securityHeadersMiddleware);
    plain.get('/json', (_req, res) => {
      res.json({ ok: true });
    });
    const reference = await startHttpServer(plain, 0, { host: '127.0.0.1' });
    try {
      const expected = await fetch(`http://127.0.0.1:${reference.port}/json`);
      const actual = await fetch(url('/missing'));
      const ordinary = new Set(['content-type', 'content-length', 'etag', 'date', 'connection', 'keep-alive']);
      const helmetHeaders = [...expected.headers.keys()].filter((name) => !ordinary.has(name));
      expect(helmetHeaders.length).toBeGreaterThan(8);
      expect(staticHeadersOf(securityHeadersMiddleware).map(([name]) => name.toLowerCase())).toEqual(
        expect.arrayContaining(helmetHeaders),
      );
      for (const name of helmetHeaders)
        expect([name, actual.headers.get(name)]).toEqual([name, expected.headers.get(name)]);
    } finally {
      await reference.close();
    }
  });

  it('answers unknown routes with the JSON 404, without x-powered-by', async () => {
    expect(await answer(await fetch(url('/nope')))).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'no such route' } },
      poweredBy: null,
    });
  });

  it('answers a bug with a JSON 500 that does not echo the error', async () => {
    expect(await answer(await fetch(url('/boom')))).toEqual({
      status: 500,
      body: { error: { code: 'internal_error', message: 'internal error' } },
      poweredBy: null,
    });
  });

  it('does not take an upstream status carried by an error for the client fault', async () => {
    expect((await fetch(url('/upstream'))).status).toBe(500);
  });

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it.each<[string, () => Promise<Response>, number, string]>([
    ['a body over the limit', () => post('/raw', 'x'.repeat(65)), 413, 'payload_too_large'],
    ['malformed JSON', () => post('/json', '{"a":'), 400, 'malformed_json'],
    [
      'an unsupported content encoding',
      () => post('/raw', '{}', { 'content-encoding': 'x-unknown' }),
      415,
      'unsupported_encoding',
    ],
    [
      'an unsupported charset',
      () => post('/json', '{}', { 'content-type': 'application/json; charset=latin1' }),
      415,
      'unsupported_encoding',
    ],
    [
      'a gzip body that does not inflate',
      () => post('/raw', Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }),
      400,
      'bad_request',
    ],
  ])('keeps the client status for %s', async (_case, send, status, code) => {
    const response = await send();
    expect({ status: response.status, body: await response.json() }).toEqual({
      status,
      body: { error: { code, message: expect.any(String) } },
    });
    expect(failures.map(({ failure }) => failure)).toEqual([{ status, code, message: expect.any(String) }]);
  });

  it('still reads a valid gzip body', async () => {
    const response = await post('/raw', gzipSync('{"a":1}'), { 'content-encoding': 'gzip' });
    expect(response.status).toBe(200);
  });

  it('maps a client that aborts mid-body to request_aborted (400), not to a 500', async () => {
    const socket = connect(running.port, '127.0.0.1');
    await once(socket, 'connect');
    const arrived = once(running.server, 'request');
    socket.write('POST /raw HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":');
    await arrived;
    socket.destroy();
    await failed;
    expect(failures).toEqual([
      {
        failure: { status: 400, code: 'request_aborted', message: 'the client aborted the request' },
        error: expect.objectContaining({ type: 'request.aborted', expose: true }),
      },
    ]);
  });

  it('maps other errors by what they say about themselves', () => {
    expect(toHttpFailure(Object.assign(new Error('x'), { status: 400, expose: true, code: 'ECONNRESET' }))).toEqual({
      status: 400,
      code: 'request_aborted',
      message: 'the client aborted the request',
    });
    expect(toHttpFailure(Object.assign(new Error('x'), { status: 500, type: 'stream.not.readable' }))).toEqual({
      status: 500,
      code: 'internal_error',
      message: 'internal error',
    });
    expect(toHttpFailure(Object.assign(new Error('x'), { statusCode: 429, expose: true })).code).toBe('client_error');
    expect(toHttpFailure('a string')).toEqual({ status: 500, code: 'internal_error', message: 'internal error' });
  });
});

describe('HTTP server timeouts', () => {
  it('applies the slow-client defaults when none are given', async () => {
    const running = await startHttpServer(express(), 0, '127.0.0.1');
    try {
      expect({
        headersTimeoutMs: running.server.headersTimeout,
        requestTimeoutMs: running.server.requestTimeout,
        keepAliveTimeoutMs: running.server.keepAliveTimeout,
      }).toEqual(defaultHttpServerTimeouts);
    } finally {
      await running.close();
    }
  });

  it('refuses a headers timeout longer than the request timeout with a readable configuration error', async () => {
    const starting = startHttpServer(express(), 0, { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 });
    await expect(starting).rejects.toThrow(ConfigError);
    await expect(starting).rejects.toThrow(
      'HTTP_HEADERS_TIMEOUT_MS (5000) must not exceed HTTP_REQUEST_TIMEOUT_MS (1000)',
    );
  });
});
