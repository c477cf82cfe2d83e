import { createPublicKey, type KeyObject, verify } from 'node:crypto';
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

/**
 * A fake App Store Server API as a real local HTTP server. Every request must carry a JWT the
 * test's In-App Purchase key signed (ES256, `kid`, `iss`, `aud` appstoreconnect-v1, `bid`, a
 * lifetime of at most 60 minutes) or it is answered 401, as Apple does. It records the consumption
 * PUTs it accepted, answers subscription statuses signed with the test chain, and can fail the
 * next N requests with a status before it recovers.
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
    send(404, { errorCode: 4040000, errorMessage: 'Not found.' });
  }
}
