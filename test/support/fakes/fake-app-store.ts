import { createPublicKey, type KeyObject, randomUUID, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppStoreApi, createAppStoreApiClient } from '@tally/billing-core';
import {
  type AppleRenewalSpec,
  type AppleTransactionSpec,
  appleBundleId,
  appleRenewalPayload,
  appleTransactionPayload,
} from '../apple-notifications';
import { type ApplePki, newEcKey } from '../apple-signing';

export const fakeAppleKeyId = 'TESTKEY123';
export const fakeAppleIssuerId = '57246542-96fe-1a63-e053-0824d011072a';

/** A consumption PUT the fake accepted (2xx), with the body Tally sent. */
export interface RecordedConsumption {
  transactionId: string;
  body: Record<string, unknown>;
}

/** One subscription the fake's status read answers (Apple's lastTransactions entry, signed by the test chain). */
export interface FakeSubscriptionStatus {
  status: 1 | 2 | 3 | 4 | 5;
  transaction: AppleTransactionSpec;
  renewalInfo?: AppleRenewalSpec;
}

/** One record of the fake's notification history: what Apple attempted to send, and when. */
export interface FakeHistoryRecord {
  signedPayload: string;
  sentAt: number;
}

/** Apple keeps this much notification history (production); an older startDate is refused. */
const HISTORY_DAYS = 180;

/**
 * A fake App Store Server API as a real local HTTP server. Every request must carry a JWT the
 * test's In-App Purchase key signed (ES256, `kid`, `iss`, `aud` appstoreconnect-v1, `bid`, a
 * lifetime of at most 60 minutes) or it is answered 401, as Apple does. It records the consumption
 * PUTs it accepted, answers subscription statuses signed with the test chain, answers Get
 * Notification History from the records a test put (pages of `historyPageSize`, a pagination
 * token per next page), and can fail the next N requests with a status before it recovers.
 */
export class FakeAppStore {
  private server!: Server;
  port = 0;
  /** The `.p8` key Tally signs with (PKCS#8 PEM) and its public half, which the fake checks. */
  readonly key = newEcKey();
  private readonly publicKey: KeyObject = createPublicKey(this.key.privateKey);
  readonly consumptions: RecordedConsumption[] = [];
  /** Every request that reached a route (after the JWT check), failed or not. */
  readonly requests: { method: string; path: string }[] = [];
  readonly refusedTokens: string[] = [];
  private readonly subscriptions = new Map<string, FakeSubscriptionStatus[]>();
  private failures: { count: number; status: number } = { count: 0, status: 503 };
  private history: FakeHistoryRecord[] = [];
  /** Records per history page (Apple: 20). */
  historyPageSize = 20;
  /** Each open pagination token: the request it continues and where its next page starts. */
  private readonly paginationTokens = new Map<string, { startDate: number; endDate: number; offset: number }>();

  constructor(private readonly pki: ApplePki) {}

  static async start(pki: ApplePki): Promise<FakeAppStore> {
    const fake = new FakeAppStore(pki);
    await fake.listen();
    return fake;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Tally's App Store port (the real client) pointed at this fake. */
  api(timeoutMs = 2_000): AppStoreApi {
    return createAppStoreApiClient({
      keyId: fakeAppleKeyId,
      issuerId: fakeAppleIssuerId,
      bundleId: appleBundleId,
      privateKeyPem: this.key.pkcs8Pem,
      baseUrl: this.baseUrl,
      timeoutMs,
    });
  }

  /** The next `count` requests (after the JWT check) are answered `status`; then it recovers. */
  failNext(count: number, status = 503): void {
    this.failures = { count, status };
  }

  /** What `GET /inApps/v1/subscriptions/{originalTransactionId}` answers from now on. */
  setSubscription(originalTransactionId: string, statuses: FakeSubscriptionStatus[]): void {
    this.subscriptions.set(originalTransactionId, statuses);
  }

  /**
   * Adds a notification to the history (whether or not it was ever delivered): what Get
   * Notification History lists, by when Apple attempted to send it (`sentAt`, by default when its
   * payload says it was signed). A test CA's certificates are valid from the test's start only, so
   * an older notification is signed now and dated back here.
   */
  addToHistory(signedPayload: string, sentAt?: number): void {
    const claimed = JSON.parse(Buffer.from(signedPayload.split('.')[1] ?? '', 'base64url').toString('utf8') || '{}');
    this.history.push({ signedPayload, sentAt: sentAt ?? Number(claimed.signedDate ?? Date.now()) });
  }

  /** Empties the history (and its pagination tokens). */
  clearHistory(): void {
    this.history = [];
    this.paginationTokens.clear();
  }

  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Whether the bearer token is a JWT Apple would take: ES256 by the test's key, with Apple's claims. */
  private authorized(header: string | undefined): boolean {
    const token = header?.startsWith('Bearer ') ? header.slice(7) : '';
    const [head, payload, signature] = token.split('.');
    if (!head || !payload || !signature) return false;
    const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    const ok = verify(
      'sha256',
      Buffer.from(`${head}.${payload}`),
      { key: this.publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    );
    if (!ok) return false;
    const h = decode(head);
    const claims = decode(payload);
    const now = Math.floor(Date.now() / 1000);
    return (
      h.alg === 'ES256' &&
      h.kid === fakeAppleKeyId &&
      claims.iss === fakeAppleIssuerId &&
      claims.aud === 'appstoreconnect-v1' &&
      claims.bid === appleBundleId &&
      typeof claims.iat === 'number' &&
      typeof claims.exp === 'number' &&
      claims.exp > now &&
      claims.exp - claims.iat <= 3600
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body?: unknown) => {
      res.statusCode = status;
      if (body !== undefined) res.setHeader('content-type', 'application/json');
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (!this.authorized(req.headers.authorization)) {
      this.refusedTokens.push(req.headers.authorization ?? '');
      return send(401);
    }
    const url = new URL(req.url ?? '/', this.baseUrl);
    this.requests.push({ method: req.method ?? '', path: url.pathname });
    if (this.failures.count > 0) {
      this.failures.count -= 1;
      return send(this.failures.status, { errorCode: 5000000, errorMessage: 'An unknown error occurred.' });
    }
    const consumption = url.pathname.match(/^\/inApps\/v2\/transactions\/consumption\/([^/]+)$/);
    if (consumption && req.method === 'PUT') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (body.customerConsented !== true) {
        return send(400, {
          errorCode: 4000149,
          errorMessage: 'Invalid request. The customer consented field is invalid.',
        });
      }
      this.consumptions.push({ transactionId: decodeURIComponent(consumption[1] as string), body });
      return send(202);
    }
    const statuses = url.pathname.match(/^\/inApps\/v1\/subscriptions\/([^/]+)$/);
    if (statuses && req.method === 'GET') {
      const originalTransactionId = decodeURIComponent(statuses[1] as string);
      const list = this.subscriptions.get(originalTransactionId);
      if (!list) return send(404, { errorCode: 4040010, errorMessage: 'Transaction id not found.' });
      return send(200, {
        environment: 'Production',
        bundleId: appleBundleId,
        appAppleId: 1,
        data: [
          {
            subscriptionGroupIdentifier: 'group',
            lastTransactions: list.map((entry) => ({
              originalTransactionId,
              status: entry.status,
              signedTransactionInfo: this.pki.sign(appleTransactionPayload(entry.transaction)),
              ...(entry.renewalInfo
                ? {
                    signedRenewalInfo: this.pki.sign(
                      appleRenewalPayload({ originalTransactionId, ...entry.renewalInfo }),
                    ),
                  }
                : {}),
            })),
          },
        ],
      });
    }
    if (url.pathname === '/inApps/v1/notifications/history' && req.method === 'POST') {
      return this.answerHistory(url, Buffer.concat(chunks).toString('utf8'), send);
    }
    send(404, { errorCode: 4040000, errorMessage: 'Not found.' });
  }

  /**
   * Get Notification History as Apple answers it: the records sent in [startDate, endDate] (a
   * future endDate is now), oldest first, `historyPageSize` per page; `hasMore` and a token for
   * the next page (`?paginationToken=`), which continues the request that made it. A startDate
   * older than Apple keeps, an endDate not after it or an unknown token is a 400.
   */
  private answerHistory(url: URL, text: string, send: (status: number, body?: unknown) => void) {
    const invalid = (errorMessage: string) => send(400, { errorCode: 4000000, errorMessage });
    const body = JSON.parse(text || '{}') as { startDate?: unknown; endDate?: unknown };
    const token = url.searchParams.get('paginationToken');
    let request: { startDate: number; endDate: number; offset: number };
    if (token !== null) {
      const continued = this.paginationTokens.get(token);
      if (!continued) return invalid('Invalid request. The pagination token is invalid.');
      this.paginationTokens.delete(token);
      request = continued;
    } else {
      const { startDate, endDate } = body;
      if (typeof startDate !== 'number' || typeof endDate !== 'number') {
        return invalid('Invalid request. The start date and end date are required.');
      }
      if (startDate < Date.now() - HISTORY_DAYS * 24 * 3600_000) {
        return invalid('Invalid request. The start date is earlier than the allowed start date.');
      }
      if (endDate <= startDate) return invalid('Invalid request. The end date is not after the start date.');
      request = { startDate, endDate: Math.min(endDate, Date.now()), offset: 0 };
    }
    const matching = this.history
      .filter((record) => record.sentAt >= request.startDate && record.sentAt <= request.endDate)
      .sort((a, b) => a.sentAt - b.sentAt);
    const page = matching.slice(request.offset, request.offset + this.historyPageSize);
    const nextOffset = request.offset + page.length;
    const hasMore = nextOffset < matching.length;
    let paginationToken: string | undefined;
    if (hasMore) {
      paginationToken = randomUUID();
      this.paginationTokens.set(paginationToken, { ...request, offset: nextOffset });
    }
    send(200, {
      notificationHistory: page.map((record) => ({
        signedPayload: record.signedPayload,
        sendAttempts: [{ attemptDate: record.sentAt, sendAttemptResult: 'NO_RESPONSE' }],
      })),
      hasMore,
      ...(paginationToken ? { paginationToken } : {}),
    });
  }
}
