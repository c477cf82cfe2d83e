import { randomBytes, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createGooglePlayApiClient,
  type GooglePlayApi,
  type GooglePlayProductPurchase,
  type GooglePlaySubscriptionPurchase,
  type GooglePlayVoidedPurchase,
  readServiceAccountKey,
} from '@tally/billing-core';
import { GooglePlayTestKeys } from './google-play-keys';

export const fakePackageName = 'com.tally.test';

/** A purchase as the fake keeps it: products.get's answer, with the product it belongs to. */
export type FakeProductPurchase = GooglePlayProductPurchase & { productId: string };

/** The Play Developer API methods a failure can be scripted for. */
export type FakeGooglePlayMethod =
  | 'token'
  | 'products.get'
  | 'products.consume'
  | 'voidedpurchases.list'
  | 'subscriptionsv2.get';

/**
 * Google as Tally meets it, on one real local HTTP server: the OAuth token endpoint (`POST
 * /token`: a JWT bearer grant whose assertion must verify with the test's service account key,
 * for Tally's client email, the androidpublisher scope and this endpoint as audience), the OIDC
 * certificates (`GET /oauth2/v1/certs`: a PEM map by key id, with a max-age, as Google serves
 * them; fetches counted) and the Play Developer API (products.get, consume, voidedpurchases.list,
 * subscriptionsv2.get) answering the state the test sets, only with a token it granted. Failures
 * can be scripted per method (`failNext`) and then recover.
 */
export class FakeGooglePlay {
  private server!: Server;
  port = 0;
  readonly keys = new GooglePlayTestKeys();
  readonly purchases = new Map<string, FakeProductPurchase>();
  readonly subscriptions = new Map<string, GooglePlaySubscriptionPurchase>();
  /** What voidedpurchases.list answers (newest last), paged `voidedPageSize` at a time. */
  readonly voided: GooglePlayVoidedPurchase[] = [];
  voidedPageSize = 100;
  /** Calls per method (refused and failed ones included) and consumes that succeeded, by token. */
  readonly calls = new Map<FakeGooglePlayMethod | 'certs', number>();
  readonly consumed: string[] = [];
  /** Grants refused, and API calls without a token the fake granted. */
  readonly refusedGrants: string[] = [];
  unauthorizedCalls = 0;
  /** Runs when a consume arrives, before it is answered (a test reads the database there). */
  onConsume: ((purchaseToken: string) => Promise<void>) | undefined;
  private readonly grantedTokens = new Set<string>();
  private readonly failures = new Map<FakeGooglePlayMethod, number[]>();

  static async start(): Promise<FakeGooglePlay> {
    const fake = new FakeGooglePlay();
    await fake.listen();
    return fake;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server = createServer((req, res) => {
        this.handle(req, res).catch((error) => {
          res.writeHead(500).end(String(error));
        });
      });
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get tokenUrl(): string {
    return `${this.baseUrl}/token`;
  }
  get certsUrl(): string {
    return `${this.baseUrl}/oauth2/v1/certs`;
  }

  /** Tally's Play Developer API port (the real client, the test's key file) pointed at this fake. */
  api(timeoutMs = 2_000): GooglePlayApi {
    return createGooglePlayApiClient({
      packageName: fakePackageName,
      key: readServiceAccountKey(this.keys.keyFilePath),
      tokenUrl: this.tokenUrl,
      baseUrl: this.baseUrl,
      timeoutMs,
    });
  }

  /** Sets (or replaces) a one-time purchase as products.get answers it. */
  setPurchase(purchaseToken: string, purchase: FakeProductPurchase): void {
    this.purchases.set(purchaseToken, purchase);
  }

  /** The next `count` calls of `method` answer `status` (then it recovers). */
  failNext(method: FakeGooglePlayMethod, count: number, status = 503): void {
    const queue = this.failures.get(method) ?? [];
    for (let index = 0; index < count; index += 1) queue.push(status);
    this.failures.set(method, queue);
  }

  /** Drops every scripted failure not yet answered. */
  clearFailures(): void {
    this.failures.clear();
  }

  count(method: FakeGooglePlayMethod | 'certs'): number {
    return this.calls.get(method) ?? 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.keys.remove();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const body = await readBody(req);
    if (req.method === 'GET' && url.pathname === '/oauth2/v1/certs') {
      this.bump('certs');
      return json(
        res,
        200,
        { [this.keys.oidcKeyId]: this.keys.oidcCertificate },
        { 'cache-control': 'public, max-age=3600' },
      );
    }
    if (req.method === 'POST' && url.pathname === '/token') return this.grant(res, body);
    const prefix = `/androidpublisher/v3/applications/${fakePackageName}/purchases`;
    if (!url.pathname.startsWith(prefix)) return json(res, 404, { error: { code: 404, message: 'not found' } });
    const rest = url.pathname.slice(prefix.length);
    const method = methodOf(req.method ?? 'GET', rest);
    if (!method) return json(res, 404, { error: { code: 404, message: 'no such method' } });
    this.bump(method);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !this.grantedTokens.has(token)) {
      this.unauthorizedCalls += 1;
      return json(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.' } });
    }
    const failure = this.failures.get(method)?.shift();
    if (failure !== undefined) return json(res, failure, { error: { code: failure, message: 'scripted failure' } });
    const purchaseToken = decodeURIComponent(rest.split('/tokens/')[1] ?? '').replace(/:consume$/, '');
    switch (method) {
      case 'products.get': {
        const purchase = this.purchases.get(purchaseToken);
        if (!purchase) return json(res, 404, { error: { code: 404, message: 'The purchase token was not found.' } });
        const { productId: _product, ...answer } = purchase;
        return json(res, 200, { kind: 'androidpublisher#productPurchase', ...answer });
      }
      case 'products.consume': {
        const purchase = this.purchases.get(purchaseToken);
        if (!purchase) return json(res, 404, { error: { code: 404, message: 'The purchase token was not found.' } });
        if (purchase.consumptionState === 1) {
          return json(res, 400, { error: { code: 400, message: 'The product purchase is not owned by the user.' } });
        }
        await this.onConsume?.(purchaseToken);
        purchase.consumptionState = 1;
        this.consumed.push(purchaseToken);
        res.writeHead(204).end();
        return;
      }
      case 'voidedpurchases.list': {
        const start = Number(url.searchParams.get('startTime') ?? 0);
        const listed = this.voided.filter((entry) => Number(entry.voidedTimeMillis ?? 0) >= start);
        const from = Number(url.searchParams.get('token') ?? 0);
        const page = listed.slice(from, from + this.voidedPageSize);
        const next = from + this.voidedPageSize < listed.length ? String(from + this.voidedPageSize) : undefined;
        return json(res, 200, { voidedPurchases: page, ...(next ? { tokenPagination: { nextPageToken: next } } : {}) });
      }
      case 'subscriptionsv2.get': {
        const subscription = this.subscriptions.get(purchaseToken);
        if (!subscription)
          return json(res, 404, { error: { code: 404, message: 'The purchase token was not found.' } });
        return json(res, 200, { kind: 'androidpublisher#subscriptionPurchaseV2', ...subscription });
      }
      default:
        return json(res, 404, {});
    }
  }

  /** The JWT bearer grant: answered only for an assertion the test's service account signed as Tally sends it. */
  private grant(res: ServerResponse, body: string): void {
    this.bump('token');
    const failure = this.failures.get('token')?.shift();
    if (failure !== undefined) {
      json(res, failure, { error: 'backend_error' });
      return;
    }
    const form = new URLSearchParams(body);
    const problem = this.checkAssertion(form);
    if (problem) {
      this.refusedGrants.push(problem);
      json(res, 400, { error: 'invalid_grant', error_description: problem });
      return;
    }
    const accessToken = `ya29.fake-${randomBytes(12).toString('hex')}`;
    this.grantedTokens.add(accessToken);
    json(res, 200, { access_token: accessToken, expires_in: 3599, token_type: 'Bearer' });
  }

  private checkAssertion(form: URLSearchParams): string | null {
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return 'wrong grant_type';
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return 'assertion is not a JWT';
    const [header, claims, signature] = parts as [string, string, string];
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${header}.${claims}`),
      this.keys.serviceAccount.publicKey,
      Buffer.from(signature, 'base64url'),
    );
    if (!signed) return 'bad signature';
    const decodedHeader = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    const decoded = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'));
    const now = Date.now() / 1000;
    if (decodedHeader.alg !== 'RS256') return 'wrong alg';
    if (decoded.iss !== this.keys.serviceAccountEmail) return 'wrong iss';
    if (decoded.aud !== this.tokenUrl) return 'wrong aud';
    if (
      !String(decoded.scope ?? '')
        .split(' ')
        .includes('https://www.googleapis.com/auth/androidpublisher')
    ) {
      return 'missing scope';
    }
    if (!(decoded.exp > now && decoded.iat <= now + 60 && decoded.exp - decoded.iat <= 3600)) return 'bad iat/exp';
    return null;
  }

  private bump(method: FakeGooglePlayMethod | 'certs'): void {
    this.calls.set(method, this.count(method) + 1);
  }
}

function methodOf(httpMethod: string, rest: string): FakeGooglePlayMethod | null {
  if (httpMethod === 'GET' && /^\/products\/[^/]+\/tokens\/[^/]+$/.test(rest)) return 'products.get';
  if (httpMethod === 'POST' && /^\/products\/[^/]+\/tokens\/[^/]+:consume$/.test(rest)) return 'products.consume';
  if (httpMethod === 'GET' && rest === '/voidedpurchases') return 'voidedpurchases.list';
  if (httpMethod === 'GET' && /^\/subscriptionsv2\/tokens\/[^/]+$/.test(rest)) return 'subscriptionsv2.get';
  return null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
