import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { stripeTokenPackPayment } from '../../support/events';
import { captureLogs, type LogLine, logLevels } from '../../support/log-capture';
import { eventually, readJson, revenueCatAuth, signStripe, TestStack } from '../../support/stack';

/** A raw TCP client, so a test can hold a request in flight by sending only part of its body. */
async function openRawClient(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed, received: () => received };
}

/** A metric's value on ingest's /metrics: the sample whose labels include `labels` (0 when none). */
async function sample(stack: TestStack, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack.ingest.port}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`).exec(line);
    if (!match) continue;
    const labelText = match[1] ?? '';
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`)))
      return Number(match[2]);
  }
  return 0;
}

const revenueCatBody = (id: string) =>
  JSON.stringify({
    api_version: '1.0',
    event: {
      id,
      type: 'NON_RENEWING_PURCHASE',
      app_user_id: 'admission-user',
      original_app_user_id: 'admission-user',
      product_id: 'tokens.100',
      environment: 'PRODUCTION',
      store: 'APP_STORE',
      transaction_id: `tx-${id}`,
      purchased_at_ms: 1_700_000_000_000,
      event_timestamp_ms: 1_700_000_000_000,
    },
  });

describe('ingest admission control (INGEST_MAX_IN_FLIGHT)', () => {
  let stack: TestStack;
  let lines: LogLine[];

  beforeAll(async () => {
    const captured = captureLogs('ingest', 'info');
    lines = captured.lines;
    stack = await TestStack.start({
      ingestMaxInFlight: 2,
      loggers: { ingest: captured.logger },
      http: { headersTimeoutMs: 1_000, requestTimeoutMs: 30_000 },
    });
  });
  const rawClients: Socket[] = [];
  afterEach(() => {
    for (const socket of rawClients.splice(0)) socket.destroy();
  });
  afterAll(() => stack.stop());

  /** A RevenueCat webhook whose headers and first half of the body are sent: admitted, in flight. */
  async function holdInFlight(id: string) {
    const body = revenueCatBody(id);
    const half = Math.floor(body.length / 2);
    const client = await openRawClient(stack.ingest.port);
    rawClients.push(client.socket);
    const arrived = once(stack.ingest.server, 'request');
    client.socket.write(
      [
        'POST /webhooks/revenuecat HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: ${revenueCatAuth}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        '',
        body.slice(0, half),
      ].join('\r\n'),
    );
    await arrived;
    return { client, rest: body.slice(half) };
  }

  it('over the cap answers 503 overloaded with Retry-After at once, stores nothing, and admits again once a request is answered', async () => {
    const first = await holdInFlight('rc-admitted-1');
    const second = await holdInFlight('rc-admitted-2');
    expect(await sample(stack, 'tally_webhooks_in_flight')).toBe(2);

    const body = stripeTokenPackPayment({ eventId: 'evt_over_the_cap' });
    const started = Date.now();
    const refused = await stack.postStripe(body, signStripe(body));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await readJson(refused)).toMatchObject({ error: { code: 'overloaded' } });
    // Answered on its headers, not after waiting for room (the held requests never finish here).
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await stack.inboxRows('stripe', 'evt_over_the_cap')).toEqual([]);
    expect(await sample(stack, 'tally_webhook_requests_total', { provider: 'stripe', outcome: 'overloaded' })).toBe(1);
    const warned = lines.filter((line) => line.msg.includes('503 overloaded'));
    expect(warned).toEqual([expect.objectContaining({ level: logLevels.warn, maxInFlight: 2, counts: { stripe: 1 } })]);

    // The admitted requests finish normally and free their places.
    first.client.socket.write(first.rest);
    await first.client.closed;
    expect(first.client.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(first.client.received()).toContain('"status":"accepted"');
    await eventually('the first request to leave the count', async () =>
      (await sample(stack, 'tally_webhooks_in_flight')) === 1 ? true : undefined,
    );
    // The provider's retry of the refused event is admitted and stored once.
    const retried = await stack.postStripe(body, signStripe(body));
    expect(retried.status).toBe(200);
    expect(await stack.inboxRows('stripe', 'evt_over_the_cap')).toHaveLength(1);

    // A client that gives up mid-body frees its place too.
    second.client.socket.destroy();
    await eventually('the aborted request to leave the count', async () =>
      (await sample(stack, 'tally_webhooks_in_flight')) === 0 ? true : undefined,
    );
    expect(await stack.inboxRows('revenuecat', 'rc-admitted-1')).toHaveLength(1);
    expect(await stack.inboxRows('revenuecat', 'rc-admitted-2')).toEqual([]);
  });

  it("counts and logs the 408s Node's HTTP layer sends before the app sees a request", async () => {
    const before = await sample(stack, 'tally_http_client_errors_total', { reason: 'request_timeout' });
    const stalled = await openRawClient(stack.ingest.port);
    stalled.socket.write('POST /webhooks/stripe HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await stalled.closed;
    // Node's own answer, unchanged by the listener.
    expect(stalled.received()).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    expect(await sample(stack, 'tally_http_client_errors_total', { reason: 'request_timeout' })).toBe(before + 1);
    expect(lines.filter((line) => line.msg.includes('ended by the server'))).toEqual([
      expect.objectContaining({ level: logLevels.warn, counts: { request_timeout: 1 } }),
    ]);
    // Bytes that are not HTTP: Node's 400, counted as malformed.
    const garbage = await openRawClient(stack.ingest.port);
    garbage.socket.write('NOT HTTP AT ALL\r\n\r\n');
    await garbage.closed;
    expect(garbage.received()).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    expect(await sample(stack, 'tally_http_client_errors_total', { reason: 'malformed' })).toBe(1);
  });
});
