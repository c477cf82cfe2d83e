import { once } from 'node:events';
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { withLoggedServer } from '../testing/log-lines';
import { createServiceApp } from './create-service-app';
import { type RunningServer, startHttpServer } from './start-http-server';

async function serve(logger: Logger): Promise<RunningServer> {
  const app = createServiceApp({
    logger,
    routes: (service) => {
      service.get('/ok', (req, res) => {
        req.log.warn({ step: 'inside' }, 'handler line');
        res.json({ ok: true });
      });
      service.get('/boom', () => {
        throw new Error('a bug');
      });
    },
  });
  return startHttpServer(app, 0, { host: '127.0.0.1' });
}

/** One request over a raw socket, so the header can hold bytes fetch refuses to send; its answer's Request-Id. */
async function rawRequestId(port: number, headerLines: string[]): Promise<string | undefined> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.end(
    Buffer.from(
      ['GET /ok HTTP/1.1', 'Host: 127.0.0.1', ...headerLines, 'Connection: close', '', ''].join('\r\n'),
      'latin1',
    ),
  );
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  await once(socket, 'close');
  expect(text.startsWith('HTTP/1.1 200')).toBe(true);
  return /\r\nrequest-id: ([^\r]*)\r\n/i.exec(text)?.[1];
}

const madeId = /^req_[0-9a-f]{24}$/;

/** Lets the access log's `finish` listeners run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('Request-Id on every answer, and in every log line of its request', () => {
  it('keeps a valid X-Request-Id on a 200, a 404 and a 500, and every line of each request carries it', () =>
    withLoggedServer('info', serve, async (server, lines) => {
      const base = `http://127.0.0.1:${server.port}`;
      const longest = `${'!~'.repeat(63)}Az`;
      expect(longest).toHaveLength(128);
      const answers = [];
      for (const [path, id] of [
        ['/ok', longest],
        ['/nope', 'client-404'],
        ['/boom', 'client-500'],
      ] as const) {
        const response = await fetch(`${base}${path}`, { headers: { 'x-request-id': id } });
        answers.push({ path, status: response.status, requestId: response.headers.get('request-id') });
        await response.body?.cancel();
      }
      await settled();
      expect(answers).toEqual([
        { path: '/ok', status: 200, requestId: longest },
        { path: '/nope', status: 404, requestId: 'client-404' },
        { path: '/boom', status: 500, requestId: 'client-500' },
      ]);
      expect(lines.map((line) => [line.msg, line.requestId])).toEqual([
        ['handler line', longest],
        ['request completed', longest],
        ['request completed', 'client-404'],
        ['unexpected error', 'client-500'],
        ['request errored', 'client-500'],
      ]);
    }));

  it('makes a new id for an X-Request-Id that is too long, empty, or holds a space, a tab, a non-ASCII byte or two values', () =>
    withLoggedServer('warn', serve, async (server, lines) => {
      const ids = [];
      for (const header of [
        `X-Request-Id: ${'a'.repeat(129)}`,
        'X-Request-Id: ',
        'X-Request-Id: two words',
        'X-Request-Id: tab\there',
        'X-Request-Id: caf\u00e9',
        'X-Request-Id: first',
      ]) {
        ids.push(
          await rawRequestId(
            server.port,
            header === 'X-Request-Id: first' ? [header, 'X-Request-Id: second'] : [header],
          ),
        );
      }
      // The 128-character limit is inclusive: one character shorter than the refused one is kept.
      ids.push(await rawRequestId(server.port, [`X-Request-Id: ${'a'.repeat(128)}`]));
      await settled();
      const made = ids.slice(0, -1);
      for (const id of made) expect(id).toMatch(madeId);
      expect(new Set(made).size).toBe(made.length);
      expect(ids.at(-1)).toBe('a'.repeat(128));
      // With info off only the handler's own line is written, and it carries the id its answer did.
      expect(lines.map((line) => line.requestId)).toEqual(ids);
    }));

  it('makes an id for a request without one, on a 200, a 404 and a 500, and logs it with the request', () =>
    withLoggedServer('info', serve, async (server, lines) => {
      const base = `http://127.0.0.1:${server.port}`;
      const answers = [];
      for (const path of ['/ok', '/nope', '/boom']) {
        const response = await fetch(`${base}${path}`);
        answers.push({ status: response.status, requestId: response.headers.get('request-id') ?? '' });
        await response.body?.cancel();
      }
      await settled();
      expect(answers.map((answer) => answer.status)).toEqual([200, 404, 500]);
      const [ok, missing, boom] = answers.map((answer) => answer.requestId);
      for (const id of [ok, missing, boom]) expect(id).toMatch(madeId);
      expect(new Set([ok, missing, boom]).size).toBe(3);
      expect(lines.map((line) => [line.msg, line.requestId])).toEqual([
        ['handler line', ok],
        ['request completed', ok],
        ['request completed', missing],
        ['unexpected error', boom],
        ['request errored', boom],
      ]);
    }));
});
