import { once } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { startHttpServer } from './start-http-server';

/**
 * Shutdown while a client keeps its keep-alive connections busy (the chaos finding of seed
 * 212146779: ingest took 5 s to stop under load and exited 1 at its deadline, because its sockets
 * never fell idle and server.close() waits for every connection).
 */
describe('startHttpServer close under keep-alive load', () => {
  it('closes while a keep-alive client sends back-to-back requests, telling it Connection: close', async () => {
    const app = express();
    let arrivals = 0;
    app.get('/work', (_req, res) => {
      arrivals += 1;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('working;');
      // Long enough that the client's next request (sent on this head) is in before this answer
      // ends even on a loaded machine: the connection must never fall idle for this test.
      setTimeout(() => res.end('done'), 50);
    });
    // keepAliveTimeout as in production (5 s): idle-timing-out alone would hold close() that long.
    // A keep-alive timeout longer than the test's own (60 s): close() can only settle in time if the
    // answers' Connection: close lets the socket go, never by waiting for the keep-alive to lapse.
    const running = await startHttpServer(app, 0, { host: '127.0.0.1', keepAliveTimeoutMs: 600_000 });
    // One keep-alive connection that is never idle: the client sends its next request as soon as
    // the head of the previous answer arrives, while that answer's body is still being written,
    // as a busy provider does. It stops when told Connection: close, or after 300 requests (15 s).
    const socket = connect(running.port, '127.0.0.1');
    const heads: string[] = [];
    let sent = 0;
    let received = '';
    const send = () => {
      sent += 1;
      socket.write('GET /work HTTP/1.1\r\nHost: x\r\n\r\n');
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      for (;;) {
        const start = received.indexOf('HTTP/1.1 ');
        const end = start < 0 ? -1 : received.indexOf('\r\n\r\n', start);
        if (end < 0) break;
        const head = received.slice(start, end);
        received = received.slice(end + 4);
        const connection = /\r\nconnection: ([^\r]+)/i.exec(head)?.[1] ?? '';
        heads.push(`${head.slice(9, 12)} ${connection}`);
        if (connection !== 'close' && sent < 300) send();
      }
    });
    socket.on('error', () => undefined);
    const socketClosed = once(socket, 'close');
    await once(socket, 'connect');
    send();
    const warmUp = Date.now() + 10_000;
    while (arrivals < 20 && Date.now() < warmUp) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(arrivals).toBeGreaterThanOrEqual(20);

    await running.close();
    const sentWhenClosed = sent;
    // The server ends the connection after its Connection: close answer; reading up to that end
    // (not destroying the socket at once) lets the last answer, possibly still in flight on a
    // loaded machine, reach the client before the heads are checked.
    const giveUp = setTimeout(() => socket.destroy(), 5_000);
    await socketClosed;
    clearTimeout(giveUp);

    // Every request was answered 200, each exactly once; the answer to the request the server
    // took while closing said close (the last one: the client sends the next only on a head that
    // keeps the connection), and the client was told so before it ran out of requests. That
    // request may have been sent just before close() began (the client's flag is not the
    // server's moment), so what is counted is the answers, not when the requests were sent.
    expect(new Set(heads.map((head) => head.slice(0, 3)))).toEqual(new Set(['200']));
    expect(heads).toHaveLength(sent);
    expect(heads.at(-1)).toBe('200 close');
    expect(heads.slice(0, -1).every((head) => head === '200 keep-alive')).toBe(true);
    // Without Connection: close the connection never falls idle and close() waits for the
    // client to give up (all 300 requests sent) plus the 5 s keep-alive timeout: close() must
    // have finished while the client still had requests left, whatever the machine's speed.
    expect(sentWhenClosed).toBeLessThan(300);
    expect(sent).toBe(sentWhenClosed);
    expect(running.server.listening).toBe(false);
  });

  it('answers a request that arrives on a busy keep-alive connection during close() with Connection: close, then closes', async () => {
    const signal = () => {
      let fire: () => void = () => undefined;
      const fired = new Promise<void>((resolve) => {
        fire = resolve;
      });
      return { fire, fired };
    };
    const slowArrived = signal();
    const workArrived = signal();
    const finishSlow = signal();
    const app = express();
    app.get('/slow', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('started;');
      slowArrived.fire();
      void finishSlow.fired.then(() => res.end('done'));
    });
    app.get('/work', (_req, res) => {
      workArrived.fire();
      res.json({ ok: true });
    });
    // A keep-alive timeout longer than the test's own (60 s): close() can only settle in time if the
    // answers' Connection: close lets the socket go, never by waiting for the keep-alive to lapse.
    const running = await startHttpServer(app, 0, { host: '127.0.0.1', keepAliveTimeoutMs: 600_000 });
    // One keep-alive connection: a request still being answered when close() is called, and the
    // client's next request sent on the same connection right after close() began (so it arrives
    // while the server is closing, on a connection that is never idle in between).
    const socket = connect(running.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    const socketClosed = once(socket, 'close');
    await once(socket, 'connect');
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await slowArrived.fired;

    const closed = running.close();
    socket.write('GET /work HTTP/1.1\r\nHost: x\r\n\r\n');
    await workArrived.fired;
    finishSlow.fire();
    await closed;
    await socketClosed;

    const answers = received
      .split('HTTP/1.1 ')
      .slice(1)
      .map((answer) => `${answer.slice(0, 3)} ${/\r\nconnection: ([^\r]+)/i.exec(answer)?.[1]}`);
    // The first answer was begun before close(); the second tells the client to close.
    expect(answers).toEqual(['200 keep-alive', '200 close']);
  });
});

/**
 * Express swaps the prototype of every request and response on arrival; on Node 20 that gave each
 * response a hidden class of its own and kept whole requests alive through young-generation
 * collections (bench/experiments.md at commit 8899a13, "Express's prototype swap"). startHttpServer has Node build
 * them with Express's prototypes already, so the swap changes nothing.
 */
describe('startHttpServer request and response construction', () => {
  it("builds every request and response with the app's Express prototypes, and Express works as before", async () => {
    const app = express();
    app.use(express.json());
    app.post('/echo', (req, res) => {
      res.status(201).json({ got: req.body, type: req.get('content-type'), secure: req.secure });
    });
    app.get('/plain', (_req, res) => {
      res.type('text').send('plain');
    });
    const running = await startHttpServer(app, 0, '127.0.0.1');
    const seen: boolean[][] = [];
    // Before Express's own handler: what Node built, before Express could swap anything.
    running.server.prependListener('request', (req, res) => {
      seen.push([
        Object.getPrototypeOf(req) === app.request,
        Object.getPrototypeOf(res) === app.response,
        req instanceof IncomingMessage,
        res instanceof ServerResponse,
      ]);
    });
    try {
      const base = `http://127.0.0.1:${running.port}`;
      const posted = await fetch(`${base}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 3 }),
      });
      expect(posted.status).toBe(201);
      expect(await posted.json()).toEqual({ got: { amount: 3 }, type: 'application/json', secure: false });
      const plain = await fetch(`${base}/plain`);
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await plain.text()).toBe('plain');
      const missing = await fetch(`${base}/nowhere`);
      expect(missing.status).toBe(404);
      expect(seen).toEqual([
        [true, true, true, true],
        [true, true, true, true],
        [true, true, true, true],
      ]);
    } finally {
      await running.close();
    }
  });
});
