import { Registry } from 'prom-client';
import { capturePinoLines } from '../testing/log-lines';
import { createServiceApp } from './create-service-app';
import { createHealthRoutes } from './health-routes';
import { type RunningServer, startHttpServer } from './start-http-server';

describe('GET /readyz', () => {
  let running: RunningServer;
  let logLines: Record<string, unknown>[] = [];
  const hung = new Promise<void>(() => undefined);

  beforeAll(async () => {
    const { logger, lines } = capturePinoLines('info');
    logLines = lines;
    const app = createServiceApp({
      logger,
      routes: (service) =>
        service.use(
          createHealthRoutes({
            checks: {
              postgres: async () => {
                throw new Error('connect ECONNREFUSED db-primary.internal.example:5432 (user tally_owner)');
              },
              redis: () => hung,
              ok: async () => undefined,
            },
            informationalChecks: { relay: async () => Promise.reject(new Error('redis-7.internal.example refused')) },
            registry: new Registry(),
            checkTimeoutMs: 50,
            logger,
          }),
        ),
    });
    running = await startHttpServer(app, 0, { host: '127.0.0.1' });
  });
  afterAll(() => running.close());

  it('answers fixed reason codes, never a dependency error text, and logs the detail', async () => {
    const response = await fetch(`http://127.0.0.1:${running.port}/readyz`);
    const text = await response.text();
    expect(response.status).toBe(503);
    expect(JSON.parse(text)).toEqual({
      status: 'unavailable',
      checks: { postgres: 'unavailable', redis: 'timeout', ok: 'ok', relay: 'unavailable' },
    });
    expect(text).not.toContain('internal.example');
    expect(text).not.toContain('tally_owner');
    const failed = logLines.filter((line) => line.msg === 'readiness check failed');
    expect(failed.map((line) => [line.check, line.result, line.level])).toEqual(
      expect.arrayContaining([
        ['postgres', 'unavailable', 40],
        ['redis', 'timeout', 40],
        ['relay', 'unavailable', 40],
      ]),
    );
    expect(JSON.stringify(failed)).toContain('db-primary.internal.example');
  });
});
