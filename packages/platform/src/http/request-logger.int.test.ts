import express from 'express';
import type { Logger } from 'pino';
import { withLoggedServer } from '../testing/log-lines';
import { useRequestIds } from './request-id';
import { createRequestLogger } from './request-logger';
import { type RunningServer, startHttpServer } from './start-http-server';

async function serve(logger: Logger): Promise<RunningServer> {
  const app = express();
  useRequestIds(app, logger);
  app.use(createRequestLogger(logger));
  app.post('/webhooks/stripe', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/boom', (_req, res) => {
    res.status(500).json({ error: 'x' });
  });
  app.get('/healthz', (_req, res) => {
    res.send('ok');
  });
  return startHttpServer(app, 0);
}

describe('the access log', () => {
  it('writes one line per request with the request line, status and duration only; 5xx at error; probes skipped', () =>
    withLoggedServer('info', serve, async (server, lines) => {
      const base = `http://127.0.0.1:${server.port}`;
      await fetch(`${base}/webhooks/stripe?x=1`, {
        method: 'POST',
        headers: { 'stripe-signature': 't=1,v1=secret-signature', 'content-type': 'application/json' },
        body: '{"email":"buyer@example.com"}',
      });
      await fetch(`${base}/boom`, { headers: { 'x-request-id': 'boom-1' } });
      await fetch(`${base}/healthz`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines.map((line) => [line.level, line.msg, line.requestId, line.req, line.res])).toEqual([
        [
          30,
          'request completed',
          expect.stringMatching(/^req_/),
          { method: 'POST', url: '/webhooks/stripe?x=1' },
          { statusCode: 200 },
        ],
        [50, 'request errored', 'boom-1', { method: 'GET', url: '/boom' }, { statusCode: 500 }],
      ]);
      expect(typeof lines[0]?.responseTimeMs).toBe('number');
      const text = JSON.stringify(lines);
      expect(text).not.toContain('secret-signature');
      expect(text).not.toContain('buyer@example.com');
    }));

  it('writes nothing when info is off', () =>
    withLoggedServer('warn', serve, async (server, lines) => {
      await fetch(`http://127.0.0.1:${server.port}/boom`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines).toEqual([]);
    }));
});
