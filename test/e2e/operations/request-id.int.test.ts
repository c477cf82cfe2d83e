import { connect } from 'node:net';
import { type RunningServer, startHttpServer } from '@tally/platform';
import { createIngestApp } from '../../../apps/ingest/src/app';
import { createIngestMetrics } from '../../../apps/ingest/src/ingest-metrics';
import { stripeTokenPackPayment } from '../../support/events';
import { captureLogs, type LogLine } from '../../support/log-capture';
import { adminKey, eventually, revenueCatAuth, signStripe, TestStack } from '../../support/stack';

const madeId = /^req_[0-9a-f]{24}$/;

/** The messages of the lines logged with one request id, once its access line (if any) is written. */
async function linesOf(lines: LogLine[], requestId: string, accessLine = true): Promise<string[]> {
  if (accessLine) {
    await eventually(`the access line of ${requestId}`, async () =>
      lines.some((line) => line.requestId === requestId && line.msg.startsWith('request ')),
    );
  }
  return lines.filter((line) => line.requestId === requestId).map((line) => line.msg);
}

async function answered(response: Response): Promise<{ status: number; requestId: string }> {
  await response.body?.cancel();
  return { status: response.status, requestId: response.headers.get('request-id') ?? '' };
}

describe('Request-Id on every answer of ingest and the api, and on each line their requests log', () => {
  const ingestLogs = captureLogs('ingest', 'debug');
  const apiLogs = captureLogs('api', 'info');
  let stack: TestStack;
  let unconfiguredIngest: RunningServer;
  const unconfiguredLogs = captureLogs('ingest', 'info');

  beforeAll(async () => {
    stack = await TestStack.start({
      loggers: { ingest: ingestLogs.logger, api: apiLogs.logger },
      // A dependency that is down: a closed port refuses the connection.
      apiReadiness: {
        downstream: () =>
          new Promise<void>((resolve, reject) => {
            const socket = connect(1, '127.0.0.1');
            socket.once('connect', () => {
              socket.destroy();
              resolve();
            });
            socket.once('error', reject);
          }),
      },
    });
    // Ingest as deployed with no webhook secrets: its webhooks answer 503 not_configured.
    unconfiguredIngest = await startHttpServer(
      createIngestApp({
        inbox: stack.inbox,
        logger: unconfiguredLogs.logger,
        metrics: createIngestMetrics(),
        stripeWebhookSecrets: [],
        stripeToleranceSeconds: 300,
        revenueCatAuthorizations: [],
        bodyLimitBytes: 64 * 1024,
        readiness: {},
      }),
      0,
      { host: '127.0.0.1' },
    );
  });
  afterAll(async () => {
    await unconfiguredIngest?.close();
    await stack.stop();
  });

  const ingest = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${stack.ingest.port}${path}`, init).then(answered);

  it('ingest keeps a valid X-Request-Id on an accepted webhook, and its lines (the handler’s too) carry it', async () => {
    const body = stripeTokenPackPayment({
      eventId: 'evt_rid_kept',
      paymentIntentId: 'pi_rid_kept',
      userId: 'rid-user',
    });
    const answer = await ingest('/webhooks/stripe', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': signStripe(body),
        'x-request-id': 'lb-7f3a:1',
      },
      body,
    });
    expect(answer).toEqual({ status: 200, requestId: 'lb-7f3a:1' });
    expect(await linesOf(ingestLogs.lines, 'lb-7f3a:1')).toEqual(['webhook accepted', 'request completed']);
  });

  it('ingest replaces an X-Request-Id that is too long or empty with one it makes', async () => {
    const answers = [];
    for (const incoming of ['x'.repeat(129), '']) {
      const body = stripeTokenPackPayment({
        eventId: `evt_rid_${incoming.length}`,
        paymentIntentId: `pi_rid_${incoming.length}`,
        userId: 'rid-user',
      });
      answers.push(
        await ingest('/webhooks/stripe', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'stripe-signature': signStripe(body),
            'x-request-id': incoming,
          },
          body,
        }),
      );
    }
    for (const answer of answers) expect(answer).toEqual({ status: 200, requestId: expect.stringMatching(madeId) });
    expect(answers[0]?.requestId).not.toBe(answers[1]?.requestId);
    for (const answer of answers) {
      expect(await linesOf(ingestLogs.lines, answer.requestId)).toEqual(['webhook accepted', 'request completed']);
    }
    expect(JSON.stringify(ingestLogs.lines)).not.toContain('x'.repeat(129));
  });

  it('ingest makes an id for a bad signature (400), a wrong authorization (401), an unsupported encoding (415), an unknown route (404), a probe and a scrape', async () => {
    const body = stripeTokenPackPayment({ eventId: 'evt_rid_bad', paymentIntentId: 'pi_rid_bad', userId: 'rid-user' });
    const badSignature = await ingest('/webhooks/stripe', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signStripe(body, 'whsec_wrong') },
      body,
    });
    const wrongAuthorization = await ingest('/webhooks/revenuecat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `${revenueCatAuth}-wrong` },
      body: '{}',
    });
    const unsupportedEncoding = await ingest('/webhooks/stripe', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'compress', 'stripe-signature': 't=1,v1=00' },
      body: '{}',
    });
    const unknown = await ingest('/no-such-route');
    const probe = await ingest('/healthz');
    const scrape = await ingest('/metrics');
    const answers = [badSignature, wrongAuthorization, unsupportedEncoding, unknown, probe, scrape];
    expect(answers.map((answer) => answer.status)).toEqual([400, 401, 415, 404, 200, 200]);
    for (const answer of answers) expect(answer.requestId).toMatch(madeId);
    expect(new Set(answers.map((answer) => answer.requestId)).size).toBe(answers.length);
    expect(await linesOf(ingestLogs.lines, badSignature.requestId)).toEqual([
      'webhook signature rejected',
      'request completed',
    ]);
    expect(await linesOf(ingestLogs.lines, wrongAuthorization.requestId)).toEqual([
      'webhook authorization rejected',
      'request completed',
    ]);
    // Refused by the body parser: the error handler's line.
    expect(await linesOf(ingestLogs.lines, unsupportedEncoding.requestId)).toEqual([
      'request rejected',
      'request completed',
    ]);
    expect(await linesOf(ingestLogs.lines, unknown.requestId)).toEqual(['request completed']);
  });

  it('ingest makes an id for a 503 (no webhook secrets), logged by the handler and the access log', async () => {
    const response = await fetch(`http://127.0.0.1:${unconfiguredIngest.port}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: '{}',
    });
    const answer = await answered(response);
    expect(answer).toEqual({ status: 503, requestId: expect.stringMatching(madeId) });
    expect(await linesOf(unconfiguredLogs.lines, answer.requestId)).toEqual([
      'a Stripe webhook arrived but STRIPE_WEBHOOK_SECRETS is empty',
      'request errored',
    ]);
  });

  it('the api keeps a valid X-Request-Id and makes one otherwise: 200, 401, 400, 404, 503, /readyz, the dashboard and the console', async () => {
    const kept = await answered(
      await stack.apiRequest('/v1/users/rid-user/wallet', { headers: { 'x-request-id': 'app-42' } }),
    );
    expect(kept).toEqual({ status: 200, requestId: 'app-42' });
    expect(await linesOf(apiLogs.lines, 'app-42')).toEqual(['request completed']);

    const tooLong = await answered(
      await stack.apiRequest('/v1/users/rid-user/wallet', { headers: { 'x-request-id': 'y'.repeat(129) } }),
    );
    const unauthorized = await answered(await stack.apiRequest('/v1/users/rid-user/wallet', { key: null }));
    const malformed = await answered(
      await fetch(`http://127.0.0.1:${stack.api.port}/admin/reconcile/stripe`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: '{',
      }),
    );
    const unknown = await answered(await stack.apiRequest('/no-such-route'));
    const unavailable = await answered(await stack.apiRequest('/admin/reconcile/stripe', { method: 'POST', body: {} }));
    const notReady = await answered(await stack.apiRequest('/readyz'));
    const dashboard = await answered(await stack.apiRequest('/admin/queues', { key: adminKey }));
    const consolePage = await answered(await stack.apiRequest('/admin/console', { key: adminKey }));
    const answers = [tooLong, unauthorized, malformed, unknown, unavailable, notReady, dashboard, consolePage];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 400, 404, 503, 503, 200, 200]);
    for (const answer of answers) expect(answer.requestId).toMatch(madeId);
    expect(new Set(answers.map((answer) => answer.requestId)).size).toBe(answers.length);

    expect(await linesOf(apiLogs.lines, tooLong.requestId)).toEqual(['request completed']);
    expect(await linesOf(apiLogs.lines, unauthorized.requestId)).toEqual(['request completed']);
    expect(await linesOf(apiLogs.lines, malformed.requestId)).toEqual(['request completed']);
    expect(await linesOf(apiLogs.lines, unknown.requestId)).toEqual(['request completed']);
    expect(await linesOf(apiLogs.lines, unavailable.requestId)).toEqual(['request errored']);
    // A probe has no access line; the readiness handler's own line carries the id.
    expect(await linesOf(apiLogs.lines, notReady.requestId, false)).toEqual(['readiness check failed']);
    expect(await linesOf(apiLogs.lines, dashboard.requestId)).toEqual(['request completed']);
    expect(await linesOf(apiLogs.lines, consolePage.requestId)).toEqual(['request completed']);
  });
});
