import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What the fake does with one call. A request picks its own through `input.fake`
 * ('succeed' | 'fail' | 'slow' | 'hang', with `input.delayMs` for slow); otherwise the default.
 */
export type FakeAiBehaviour =
  | { kind: 'succeed' }
  | { kind: 'fail'; status?: number }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'hang' };

export interface FakeAiCall {
  requestId: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
  /** When the fake had read the whole request (epoch ms). */
  receivedAt: number;
  /**
   * Set once the fake has written its answer on a connection still open (never for a hanging
   * call, nor for one whose connection closed first: the caller gave up, was killed, or the fake
   * cut it).
   */
  answeredWith?: number;
  answeredAt?: number;
  /** The connection closed before the fake answered (the answer, if one came due, was never written). */
  closedBeforeAnswer?: boolean;
}

/**
 * A real local HTTP server playing the AI service (`POST /v1/generations`): it succeeds with a
 * JSON result, fails with a 500, answers slowly, or never answers, per request, and records
 * every call it received.
 */
export class FakeAiStudio {
  readonly calls: FakeAiCall[] = [];
  defaultBehaviour: FakeAiBehaviour = { kind: 'succeed' };
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Answers that came due while held (`hold`), written on `release`. */
  private held: (() => void)[] | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly apiKey: string,
    private readonly port: number,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(apiKey = 'ai_test_key'): Promise<FakeAiStudio> {
    let fake: FakeAiStudio | undefined;
    const server = createServer((req, res) => {
      if (fake) fake.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeAiStudio(server, `http://127.0.0.1:${port}`, apiKey, port);
    return fake;
  }

  /** Calls received for one request id. */
  callsFor(requestId: string): FakeAiCall[] {
    return this.calls.filter((call) => call.requestId === requestId);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/generations') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const call: FakeAiCall = {
        requestId: String(body.requestId),
        authorization: req.headers.authorization,
        body,
        receivedAt: Date.now(),
      };
      this.calls.push(call);
      res.once('close', () => {
        if (call.answeredWith === undefined) call.closedBeforeAnswer = true;
      });
      const behaviour = this.behaviourOf(body);
      const answer = (status: number, payload: unknown) => {
        if (this.held) {
          this.held.push(() => answer(status, payload));
          return;
        }
        if (res.destroyed || !req.socket.writable) {
          call.closedBeforeAnswer = true;
          return;
        }
        call.answeredWith = status;
        call.answeredAt = Date.now();
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      };
      const success = () =>
        answer(200, {
          generationId: `gen-${call.requestId}`,
          kind: body.kind,
          url: `https://cdn.example/${call.requestId}`,
        });
      switch (behaviour.kind) {
        case 'succeed':
          return success();
        case 'fail':
          return answer(behaviour.status ?? 500, { error: 'model crashed' });
        case 'slow': {
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            success();
          }, behaviour.delayMs);
          this.timers.add(timer);
          return;
        }
        case 'hang':
          return;
      }
    });
  }

  private behaviourOf(body: Record<string, unknown>): FakeAiBehaviour {
    const input = body.input as { fake?: unknown; delayMs?: unknown } | null | undefined;
    switch (input?.fake) {
      case 'succeed':
        return { kind: 'succeed' };
      case 'fail':
        return { kind: 'fail' };
      case 'slow':
        return { kind: 'slow', delayMs: Number(input.delayMs ?? 1_000) };
      case 'hang':
        return { kind: 'hang' };
      default:
        return this.defaultBehaviour;
    }
  }

  /** The service dies mid-call: every open connection (calls in flight included) is cut. */
  dropConnections(): void {
    // Every socket, idle keep-alive ones included (closeAllConnections skips some states).
    this.server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
  }

  /**
   * From now on no answer is written: one that comes due waits for `release`. Lets a test put a
   * fault between answers (nothing is half-delivered when it lands).
   */
  hold(): void {
    this.held ??= [];
  }

  /** Writes the answers that came due while held (on connections still open; the others are lost). */
  release(): void {
    const due = this.held ?? [];
    this.held = undefined;
    for (const answer of due) answer();
  }

  /**
   * An outage: the service stops listening and cuts every connection for `downMs` (callers get
   * connection refused, or a reset on a pooled socket), then listens again on the same port.
   */
  async outage(downMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropConnections();
    await closed;
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.held = undefined;
    this.dropConnections();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
