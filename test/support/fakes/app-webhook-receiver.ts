import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A fresh `whsec_` secret (24 random bytes, base64), as an app would generate one. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * What the receiver answers to one POST: a status (after `delayMs`, when given: a slow app, or
 * one answering after the sender gave up), or nothing at all (`hang`: the connection stays open
 * until the sender gives up).
 */
/** `delayMs` answers after a time; `after` once that promise settles (a gate the test opens). */
export type ReceiverAnswer =
  | { kind: 'status'; status: number; body?: string; delayMs?: number; after?: Promise<unknown> }
  | { kind: 'hang' };

export interface ReceivedDelivery {
  webhookId: string;
  timestamp: string;
  signature: string;
  /** The body, parsed after every secret verified it. */
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  rawBody: string;
  /** Arrival order among every verified delivery (0, 1, 2…): the app's view of "first". */
  seq: number;
  /** When it arrived (Date.now()). */
  at: number;
  /** What the receiver answered (undefined: it hung, or the connection closed before the answer). */
  answeredWith?: number;
  /** The sender closed the connection before an answer was written (it timed out, or died). */
  closedBeforeAnswer?: boolean;
}

/**
 * A real local HTTP server playing the app's webhook endpoint. Every POST is verified with the
 * Standard Webhooks reference library against EACH of `secrets` separately (so a delivery passes
 * only when every secret signed it); one that fails verification is answered 400 and kept in
 * `rejected`. Answers follow `answers` (a queue, then `answerFor`, then `defaultAnswer`), so a
 * test can fail N times, hang, answer slowly, then recover. `accepted` is every verified delivery that got a 2xx written on an
 * open connection, in arrival order; `deliveries` every verified one, whatever it was answered.
 * `down()` / `up()` stop and resume listening on the same port (senders get connection refused).
 */
export class AppWebhookReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  readonly accepted: ReceivedDelivery[] = [];
  readonly rejected: { headers: IncomingMessage['headers']; error: string }[] = [];
  readonly answers: ReceiverAnswer[] = [];
  defaultAnswer: ReceiverAnswer = { kind: 'status', status: 204 };
  /** Decides per delivery, after the `answers` queue and before `defaultAnswer` (undefined: the default). */
  answerFor: ((delivery: ReceivedDelivery) => ReceiverAnswer | undefined) | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly verifiers: Webhook[];
  private readonly port: number;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly secrets: readonly string[],
  ) {
    this.verifiers = secrets.map((secret) => new Webhook(secret));
    this.port = (server.address() as AddressInfo).port;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(secrets: readonly string[]): Promise<AppWebhookReceiver> {
    let receiver: AppWebhookReceiver | undefined;
    const server = createServer((req, res) => {
      if (receiver) receiver.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new AppWebhookReceiver(server, `http://127.0.0.1:${port}/webhooks/tally`, secrets);
    return receiver;
  }

  /** Answers the next `count` deliveries with `status` (and a body the outbox keeps truncated). */
  failNext(count: number, status = 503, body = 'receiver is down'): void {
    for (let i = 0; i < count; i += 1) this.answers.push({ kind: 'status', status, body });
  }

  /** Verified deliveries that were accepted, by webhook-id, in arrival order (a redelivery repeats). */
  acceptedIds(): string[] {
    return this.accepted.map((delivery) => delivery.webhookId);
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /** The app is down: no longer listening (connection refused), every open connection cut. */
  async down(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropConnections();
    await closed;
  }

  /** Listening again on the same port. */
  async up(): Promise<void> {
    if (this.server.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Every open connection cut (requests in flight included). */
  dropConnections(): void {
    this.server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let body: ReceivedDelivery['body'] | undefined;
      try {
        for (const verifier of this.verifiers) body = verifier.verify(rawBody, headers) as ReceivedDelivery['body'];
      } catch (error) {
        this.rejected.push({ headers: req.headers, error: String(error) });
        res.writeHead(400).end('bad signature');
        return;
      }
      if (!body) throw new Error('the receiver has no secrets');
      const delivery: ReceivedDelivery = {
        webhookId: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        rawBody,
        seq: this.deliveries.length,
        at: Date.now(),
      };
      this.deliveries.push(delivery);
      res.once('close', () => {
        if (delivery.answeredWith === undefined) delivery.closedBeforeAnswer = true;
      });
      const answer = this.answers.shift() ?? this.answerFor?.(delivery) ?? this.defaultAnswer;
      if (answer.kind === 'hang') return;
      const write = () => {
        if (res.destroyed || res.socket?.destroyed) {
          delivery.closedBeforeAnswer = true;
          return;
        }
        delivery.answeredWith = answer.status;
        if (answer.status >= 200 && answer.status < 300) this.accepted.push(delivery);
        res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
      };
      if (answer.after !== undefined) {
        void answer.after.then(write);
        return;
      }
      if (!answer.delayMs) return write();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        write();
      }, answer.delayMs);
      this.timers.add(timer);
    });
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.dropConnections();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
