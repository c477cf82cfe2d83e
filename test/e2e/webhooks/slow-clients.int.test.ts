import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../../support/events';
import { eventually, readJson, revenueCatAuth, signStripe, type TestStack } from '../../support/stack';
import { suiteStack } from '../../support/suite';

const headersTimeoutMs = 1_000;
const requestTimeoutMs = 2_000;
// Node sweeps for timed-out connections every quarter of the headers timeout (startHttpServer);
// the rest is slack for a busy test machine.
const slackMs = 1_500;

/**
 * A raw TCP client, so a test can send half a request and stall like a slowloris client. A socket
 * error is recorded, not thrown: a server that closes a connection with bytes still unread (a client
 * that keeps dripping headers) sends a reset after its answer, which the client reads as ECONNRESET.
 */
async function openRawClient(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', (cause: NodeJS.ErrnoException) => {
    error = cause;
  });
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  return { socket, closed, received: () => received, error: () => error?.code };
}

/** Ingest's webhook counter as scraped from /metrics: `outcome` → total, for one provider. */
async function webhookOutcomes(stack: TestStack, provider: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${stack.ingest.port}/metrics`)).text();
  const outcomes: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^tally_webhook_requests_total\{([^}]*)\} (\d+)/.exec(line);
    if (!match?.[1]?.includes(`provider="${provider}"`)) continue;
    const outcome = /outcome="([^"]+)"/.exec(match[1])?.[1];
    if (outcome) outcomes[outcome] = Number(match[2]);
  }
  return outcomes;
}

describe('slow and vanishing clients', () => {
  const stack = suiteStack({ http: { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs: 500 } });

  it('disconnects clients that never finish their headers within the timeout, serving real webhooks meanwhile', async () => {
    const stalled = await openRawClient(stack.ingest.port);
    const started = Date.now();
    stalled.socket.write('POST /webhooks/stripe HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
    // A client that keeps sending header bytes, slowly, is held to the same deadline.
    const dripping = await openRawClient(stack.ingest.port);
    dripping.socket.write('POST /webhooks/revenuecat HTTP/1.1\r\n');
    const drip = setInterval(() => {
      if (!dripping.socket.destroyed) dripping.socket.write('X-Slow: a\r\n');
    }, 100);

    try {
      const stripeBody = stripeTokenPackPayment({ eventId: 'evt_while_stalled' });
      const stripeAnswer = await stack.postStripe(stripeBody, signStripe(stripeBody));
      const revenueCatBody = revenueCatTokenPurchase({ id: 'rc-while-stalled' });
      const revenueCatAnswer = await stack.postRevenueCat(revenueCatBody);
      expect([
        { status: stripeAnswer.status, body: await readJson(stripeAnswer) },
        { status: revenueCatAnswer.status, body: await readJson(revenueCatAnswer) },
      ]).toEqual([
        { status: 200, body: { status: 'accepted', eventId: 'evt_while_stalled' } },
        { status: 200, body: { status: 'accepted', eventId: 'rc-while-stalled' } },
      ]);
      expect(stalled.socket.destroyed).toBe(false);

      const [stalledClosedAt, drippingClosedAt] = await Promise.all([stalled.closed, dripping.closed]);
      expect(stalledClosedAt - started).toBeLessThan(headersTimeoutMs + slackMs);
      expect(drippingClosedAt - started).toBeLessThan(headersTimeoutMs + slackMs);
      expect(stalled.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(stalled.error()).toBeUndefined();
      expect(dripping.received()).toMatch(/^HTTP\/1\.1 408 /);
      // The dripping client's bytes after the deadline go unread, so its close may be a reset.
      expect([undefined, 'ECONNRESET']).toContain(dripping.error());
    } finally {
      clearInterval(drip);
    }
    expect(await stack.inboxRows('stripe', 'evt_while_stalled')).toHaveLength(1);
    expect(await stack.inboxRows('revenuecat', 'rc-while-stalled')).toHaveLength(1);
  });

  it('applies the configured timeouts to the api server too', () => {
    for (const running of [stack.ingest, stack.api]) {
      expect({
        headersTimeout: running.server.headersTimeout,
        requestTimeout: running.server.requestTimeout,
        keepAliveTimeout: running.server.keepAliveTimeout,
      }).toEqual({ headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, keepAliveTimeout: 500 });
    }
  });

  /** Sends headers and part of a RevenueCat body, returning once ingest's handler has the request. */
  async function startPartialWebhook() {
    const client = await openRawClient(stack.ingest.port);
    const arrived = once(stack.ingest.server, 'request');
    client.socket.write(
      [
        'POST /webhooks/revenuecat HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: ${revenueCatAuth}`,
        'Content-Type: application/json',
        'Content-Length: 1000',
        '',
        '{"api_version":"1.0","event":{"id":"rc-partial",',
      ].join('\r\n'),
    );
    await arrived;
    return client;
  }

  it('counts a client that aborts mid-body as aborted, not as an error, and stays healthy', async () => {
    const before = await webhookOutcomes(stack, 'revenuecat');
    const client = await startPartialWebhook();
    client.socket.destroy();

    const after = await eventually('the abort to be counted', async () => {
      const outcomes = await webhookOutcomes(stack, 'revenuecat');
      return (outcomes.aborted ?? 0) > (before.aborted ?? 0) ? outcomes : undefined;
    });
    expect(after).toEqual({ ...before, aborted: (before.aborted ?? 0) + 1 });
    expect(after.error ?? 0).toBe(0);
    expect(await stack.inboxRows('revenuecat', 'rc-partial')).toEqual([]);

    expect((await fetch(`http://127.0.0.1:${stack.ingest.port}/healthz`)).status).toBe(200);
    const body = revenueCatTokenPurchase({ id: 'rc-after-abort' });
    expect((await stack.postRevenueCat(body)).status).toBe(200);
  });

  it('cuts off a client that stalls mid-body at the request timeout, counting it as aborted', async () => {
    const before = await webhookOutcomes(stack, 'revenuecat');
    const client = await startPartialWebhook();
    const started = Date.now();
    const closedAt = await client.closed;
    expect(closedAt - started).toBeLessThan(requestTimeoutMs + slackMs);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    const after = await eventually('the cut-off to be counted', async () => {
      const outcomes = await webhookOutcomes(stack, 'revenuecat');
      return (outcomes.aborted ?? 0) > (before.aborted ?? 0) ? outcomes : undefined;
    });
    expect(after).toEqual({ ...before, aborted: (before.aborted ?? 0) + 1 });
  });

  it('answers 413 at once, without waiting for the body, when the declared Content-Length is over the limit', async () => {
    for (const [path, auth] of [
      ['/webhooks/stripe', ''],
      ['/webhooks/revenuecat', `Authorization: ${revenueCatAuth}\r\n`],
    ] as const) {
      const client = await openRawClient(stack.ingest.port);
      const started = Date.now();
      // 50 MB declared (the stack's limit is 64 kB), one byte sent: body-parser alone would wait
      // for the rest until the request timeout.
      client.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: 52428800\r\n\r\n{`,
      );
      const closedAt = await client.closed;
      expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
      expect(client.received()).toContain('"payload_too_large"');
      // Well under the request timeout (2 s here): answered on the headers alone.
      expect(closedAt - started).toBeLessThan(requestTimeoutMs / 2);
    }
  });
});
