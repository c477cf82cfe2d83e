import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRevenueCatApiClient, type RevenueCatApi, type RevenueCatSubscription } from '@tally/billing-core';
import { ProviderFaults } from './provider-faults';

/** A scripted answer the fake gives instead of the subscriber (once per script entry). */
export type FakeRevenueCatAnswer =
  | { status: 429; retryAfter?: string }
  | { status: 500 | 502 | 503 | 400 | 401 | 404 }
  | { status: 200; delayMs: number }
  | { status: 200; body: string };

/** One entry of RevenueCat's `non_subscriptions[product_id]` (REST v1). */
export interface FakeNonSubscription {
  id: string;
  is_sandbox: boolean;
  purchase_date: string;
  store: string;
  store_transaction_id: string;
}

export const fakeRevenueCatApiKey = 'sk_test_fake_revenuecat';

/**
 * A fake RevenueCat REST v1 (`GET /v1/subscribers/{id}`) as a real local HTTP server. It holds
 * per-customer state (subscriptions keyed by product id; aliases answer for their customer),
 * counts requests per id, can be scripted to answer 429/5xx/slowly, and emulates RevenueCat's
 * get-or-create: an id it does not know is created and answered with 201, and recorded in
 * `unknownRequested` so tests can prove Tally never asked for an arbitrary id. It tracks reads in
 * flight per customer and can hold them until several overlap (`holdReadsUntilConcurrent`).
 */
export class FakeRevenueCat {
  private server!: Server;
  port = 0;
  private readonly customers = new Map<string, Record<string, RevenueCatSubscription>>();
  private readonly aliasOf = new Map<string, string>();
  /** A customer's `original_app_user_id` when it is not the customer's key. */
  private readonly originalOf = new Map<string, string>();
  /** Consumable purchases per customer, keyed by product id (RevenueCat's `non_subscriptions`). */
  private readonly purchases = new Map<string, Record<string, FakeNonSubscription[]>>();
  private readonly scripts = new Map<string, FakeRevenueCatAnswer[]>();
  private readonly anyScript: FakeRevenueCatAnswer[] = [];
  /** Requests per requested id (decoded), including scripted failures. */
  readonly calls = new Map<string, number>();
  /** Ids requested that were not known: RevenueCat would have created these customers. */
  readonly unknownRequested: string[] = [];
  /** Authorization values that were refused. */
  readonly refusedAuthorizations: string[] = [];
  /** Fault injection for every authorized request (latency, 5xx, 429 with Retry-After, hangs). */
  readonly faults = new ProviderFaults();
  /** Authorized requests being answered right now, per customer (aliases count for their customer). */
  private readonly inFlight = new Map<string, number>();
  private readonly maxInFlight = new Map<string, number>();
  private readonly holds = new Map<string, { count: number; release: (() => void)[]; timer: NodeJS.Timeout }>();

  static async start(): Promise<FakeRevenueCat> {
    const fake = new FakeRevenueCat();
    await fake.listen();
    return fake;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Tally's RevenueCat port (the real REST client) pointed at this fake. */
  api(timeoutMs = 2_000): RevenueCatApi {
    return createRevenueCatApiClient({ apiKey: fakeRevenueCatApiKey, baseUrl: this.baseUrl, timeoutMs });
  }

  /**
   * Sets a customer's subscriptions (replacing them); `aliases` answer for the same customer. Its
   * `original_app_user_id` (the id RevenueCat first knew it by) is `appUserId` unless
   * `originalAppUserId` names another of its ids.
   */
  setSubscriber(
    appUserId: string,
    subscriptions: Record<string, RevenueCatSubscription>,
    aliases: string[] = [],
    options: { originalAppUserId?: string } = {},
  ) {
    this.customers.set(appUserId, subscriptions);
    for (const alias of aliases) this.aliasOf.set(alias, appUserId);
    if (options.originalAppUserId !== undefined) this.originalOf.set(appUserId, options.originalAppUserId);
  }

  /**
   * Lists a consumable purchase (a token pack) for a customer, as RevenueCat's read shows it once
   * the store has reported it: `non_subscriptions[productId][]` with its `store_transaction_id`.
   * Creates the customer if the fake did not know it.
   */
  addNonSubscription(appUserId: string, productId: string, storeTransactionId: string) {
    const customer = this.customerOf(appUserId);
    if (!this.customers.has(customer)) this.customers.set(customer, {});
    const products = this.purchases.get(customer) ?? {};
    const list = products[productId] ?? [];
    list.push({
      id: `fake_${list.length + 1}_${storeTransactionId}`,
      is_sandbox: false,
      purchase_date: new Date().toISOString(),
      store: 'app_store',
      store_transaction_id: storeTransactionId,
    });
    products[productId] = list;
    this.purchases.set(customer, products);
  }

  /** Removes a customer (tests of transfers move subscriptions between customers). */
  deleteSubscriber(appUserId: string) {
    this.customers.delete(appUserId);
  }

  /** Queues answers for one id (or for any id when `appUserId` is null), used in order. */
  script(appUserId: string | null, ...answers: FakeRevenueCatAnswer[]) {
    if (appUserId === null) {
      this.anyScript.push(...answers);
      return;
    }
    this.scripts.set(appUserId, [...(this.scripts.get(appUserId) ?? []), ...answers]);
  }

  /**
   * Holds the reads of one customer (by any of its ids) until `count` of them are in flight at
   * once, then answers them all together: the callers' reads provably overlapped. After
   * `timeoutMs` the held reads are answered anyway, so a test whose reads never overlap fails on
   * `maxReadsInFlight` instead of hanging.
   */
  holdReadsUntilConcurrent(customerId: string, count: number, timeoutMs = 10_000) {
    const hold = {
      count,
      release: [] as (() => void)[],
      timer: setTimeout(() => this.releaseHold(customerId), timeoutMs),
    };
    this.holds.set(customerId, hold);
  }

  /** The most reads of one customer (by any of its ids) that were in flight at the same time. */
  maxReadsInFlight(customerId: string): number {
    return this.maxInFlight.get(customerId) ?? 0;
  }

  private releaseHold(customerId: string) {
    const hold = this.holds.get(customerId);
    if (!hold) return;
    this.holds.delete(customerId);
    clearTimeout(hold.timer);
    for (const release of hold.release) release();
  }

  private customerOf(id: string): string {
    return this.customers.has(id) ? id : (this.aliasOf.get(id) ?? id);
  }

  callsFor(appUserId: string): number {
    return this.calls.get(appUserId) ?? 0;
  }

  totalCalls(): number {
    let total = 0;
    for (const count of this.calls.values()) total += count;
    return total;
  }

  /** Starts a fake made with `new FakeRevenueCat()` on a free port (what start() does). */
  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = /^\/v1\/subscribers\/([^/?]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
    if (req.method !== 'GET' || !match?.[1]) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'not found' }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${fakeRevenueCatApiKey}`) {
      this.refusedAuthorizations.push(String(req.headers.authorization));
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Invalid API key' }));
      return;
    }
    const id = decodeURIComponent(match[1]);
    this.calls.set(id, (this.calls.get(id) ?? 0) + 1);
    const customer = this.customerOf(id);
    const inFlight = (this.inFlight.get(customer) ?? 0) + 1;
    this.inFlight.set(customer, inFlight);
    this.maxInFlight.set(customer, Math.max(inFlight, this.maxInFlight.get(customer) ?? 0));
    // A read ends when it is answered or when its client gives up (a timeout closes the socket).
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.inFlight.set(customer, (this.inFlight.get(customer) ?? 1) - 1);
    };
    res.once('close', end);
    try {
      const hold = this.holds.get(customer);
      if (hold) {
        const released = new Promise<void>((resolve) => hold.release.push(resolve));
        if (inFlight >= hold.count) this.releaseHold(customer);
        await released;
      }
      await this.answer(id, res);
    } finally {
      end();
    }
  }

  private async answer(id: string, res: ServerResponse): Promise<void> {
    const verdict = await this.faults.gate(res);
    if (verdict.kind === 'hung') return;
    if (verdict.kind === 'error') {
      res.writeHead(verdict.status, { 'content-type': 'application/json', ...verdict.headers });
      res.end(JSON.stringify({ message: `fake fault ${verdict.status}` }));
      return;
    }

    const scripted = this.scripts.get(id)?.shift() ?? this.anyScript.shift();
    if (scripted) {
      if (scripted.status === 429) {
        res.writeHead(429, scripted.retryAfter === undefined ? {} : { 'retry-after': scripted.retryAfter });
        res.end(JSON.stringify({ message: 'rate limited' }));
        return;
      }
      if (scripted.status !== 200) {
        res.writeHead(scripted.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'scripted failure' }));
        return;
      }
      if ('body' in scripted) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(scripted.body);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    }

    const customerId = this.customers.has(id) ? id : this.aliasOf.get(id);
    let status = 200;
    if (customerId === undefined) {
      // RevenueCat's get-or-create: the read makes a customer.
      this.unknownRequested.push(id);
      this.customers.set(id, {});
      status = 201;
    }
    const key = customerId ?? id;
    const body = {
      request_date: new Date().toISOString(),
      request_date_ms: Date.now(),
      subscriber: {
        original_app_user_id: this.originalOf.get(key) ?? key,
        first_seen: '2024-01-01T00:00:00Z',
        entitlements: {},
        non_subscriptions: this.purchases.get(key) ?? {},
        other_purchases: {},
        subscriptions: this.customers.get(key) ?? {},
      },
    };
    if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  async stop(): Promise<void> {
    for (const customerId of [...this.holds.keys()]) this.releaseHold(customerId);
    this.faults.releaseAll();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** An ISO date `days` from now (negative for the past). */
export function daysFromNow(days: number): string {
  return new Date(Date.now() + days * 24 * 3600_000).toISOString();
}
