import {
  type AppleNotificationVerifier,
  type InboxEventDraft,
  InvalidEventError,
  type Provider,
  toRevenueCatInboxDraftFromBody,
  toStripeInboxDraftFromBody,
} from '@tally/billing-core';
import { createFailedAuthLimiter, createWindowedWarn, type Logger, matchesAnySecret, sendError } from '@tally/platform';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { InboxBatcher } from '../inbox-batcher';
import { type IngestMetrics, providerLabelOf } from '../ingest-metrics';
import { verifyStripeSignature } from '../verify/verify-stripe-signature';
import { appleNotConfigured, appleWebhookHandle } from './apple-webhook-route';
import { type GooglePlayPushSettings, useGooglePlayWebhookRoute } from './google-play-webhook-route';

export interface WebhookRouteDeps {
  /**
   * Stores each verified webhook (batched with concurrent ones) and hands it to the queue
   * (inbox-batcher.ts). Built by the composition root, which drains it on shutdown.
   */
  inbox: InboxBatcher;
  logger: Logger;
  metrics: IngestMetrics;
  stripeWebhookSecrets: readonly string[];
  stripeToleranceSeconds: number;
  revenueCatAuthorizations: readonly string[];
  /** App Store notifications' check (APPLE_*); undefined: POST /webhooks/apple answers 503 not_configured. */
  appleNotifications?: AppleNotificationVerifier | undefined;
  /** Google Play's Pub/Sub pushes (all of GOOGLE_PLAY_PACKAGE_NAME, GOOGLE_PUBSUB_*); unset: 503 not_configured. */
  googlePlay?: GooglePlayPushSettings | undefined;
  bodyLimitBytes: number;
  nowMs?: () => number;
  /**
   * Requests that FAIL authentication (bad Stripe signature, wrong RevenueCat authorization)
   * per client IP and window before further failures are answered 429. Valid requests are never
   * counted nor limited, so a flood of forgeries from any address cannot slow a provider.
   * Unset or limit 0: off.
   */
  failedAuthLimit?: { limit: number; windowMs: number };
  /**
   * Admission control (INGEST_MAX_IN_FLIGHT): at most this many webhook requests in flight, from
   * the route's first look at a request (its headers read) to its answer. Over it, a request is
   * answered `503 overloaded` with `Retry-After: 1` at once, its body not parsed, nothing stored.
   * Unset or 0: no cap.
   */
  maxInFlight?: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What is refused before the body is read (true: answered): 415 unless the request declares a
 * JSON body; 413 at once for a body whose declared Content-Length is already over the limit.
 * body-parser would read (drain) the whole declared body before answering, so a slow client
 * declaring a huge body would hold its socket until the request timeout. The connection is closed
 * after the 413 (the unread body cannot be skipped). Encoded bodies are left to the parser: the
 * limit applies to their inflated size.
 */
function refuseBeforeReading(provider: Provider, metrics: IngestMetrics, limitBytes: number) {
  return (req: Request, res: Response): boolean => {
    if (!declaresJson(req)) {
      metrics.webhookRequests.inc({ provider, outcome: 'unsupported_media_type' });
      sendError(res, 415, 'unsupported_media_type', 'webhooks must be sent as application/json');
      return true;
    }
    const declared = Number(req.headers['content-length']);
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity' || !Number.isFinite(declared) || declared <= limitBytes) return false;
    metrics.webhookRequests.inc({ provider, outcome: 'too_large' });
    res.setHeader('Connection', 'close');
    sendError(res, 413, 'payload_too_large', 'request body is too large');
    return true;
  };
}

/**
 * Whether the request may carry a JSON body: `req.is('application/json')` is not false. The two
 * Content-Types providers send are matched as strings first (the same answer, without parsing
 * the media type).
 */
function declaresJson(req: Request): boolean {
  const type = req.headers['content-type'];
  if (type === 'application/json' || type === 'application/json; charset=utf-8') return true;
  return req.is('application/json') !== false;
}

/**
 * The raw body as UTF-8 text, or null after answering 400. A literal NUL byte is refused here:
 * it is not valid JSON anywhere in a document (inside a string it must be written \u0000) and
 * Postgres text cannot store it, so such a body could be neither parsed nor kept.
 */
function readRawBody(
  req: Request,
  res: Response,
  provider: Provider,
  metrics: IngestMetrics,
): { raw: Buffer; text: string } | null {
  const raw: unknown = req.body;
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    metrics.webhookRequests.inc({ provider, outcome: 'bad_request' });
    sendError(res, 400, 'empty_body', 'request body is empty');
    return null;
  }
  if (raw.includes(0)) {
    metrics.webhookRequests.inc({ provider, outcome: 'bad_request' });
    sendError(res, 400, 'invalid_encoding', 'request body contains a NUL byte');
    return null;
  }
  try {
    return { raw, text: utf8.decode(raw) };
  } catch {
    metrics.webhookRequests.inc({ provider, outcome: 'bad_request' });
    sendError(res, 400, 'invalid_encoding', 'request body is not UTF-8');
    return null;
  }
}

/**
 * The 200 of a stored webhook: the same answer as `res.status(200).json(…)` (the same body and
 * Content-Type), written directly. Express's json/send parse and format the Content-Type twice
 * and check freshness for every answer; this is the answer every accepted webhook gets.
 */
function answer200(res: Response, status: 'accepted' | 'duplicate', eventId: string): void {
  const text = JSON.stringify({ status, eventId });
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * The metrics counter's child per (provider, outcome), looked up once: prom-client otherwise
 * hashes the label object on every increment.
 */
function outcomeCounter(metrics: IngestMetrics) {
  const children = new Map<string, { inc: () => void }>();
  return (provider: Provider, outcome: 'accepted' | 'duplicate' | 'unavailable') => {
    const key = `${provider}:${outcome}`;
    let child = children.get(key);
    if (!child) {
      child = metrics.webhookRequests.labels(provider, outcome);
      children.set(key, child);
    }
    child.inc();
  };
}

/**
 * Calls `reject` (the 400/401 answer) for a request that failed authentication, unless its IP
 * has failed too often in the window: then 429. Only failures reach this; valid requests never do.
 */
function failedAuthLimiter(deps: WebhookRouteDeps) {
  const refuse = createFailedAuthLimiter(deps.failedAuthLimit, (req, res) => {
    const provider = providerLabelOf(req.path);
    deps.metrics.webhookRequests.inc({ provider, outcome: 'rate_limited' });
    if (deps.logger.isLevelEnabled('debug')) req.log.debug({ provider }, 'failed authentication rate-limited');
    sendError(res, 429, 'too_many_failed_attempts', 'too many requests failed authentication; retry later');
  });
  return (req: Request, res: Response, _provider: Provider, reject: () => void) => refuse(req, res, reject);
}

/**
 * Admission control: true when the request may go on (it is then counted until its answer is
 * done or its connection closes); false after answering 503 `overloaded`. Without it, a burst of
 * more concurrent requests than the process can serve within the HTTP timeouts (a duplicate
 * storm on a starved machine) makes every request wait behind all the others until Node answers
 * them 408 together and none is stored: a congestion collapse the provider's retries refill. With
 * it, the admitted ones finish and the rest get a prompt, cheap answer to retry
 * (docs/reliability.md#starvation).
 */
function admissionControl(deps: WebhookRouteDeps) {
  const max = deps.maxInFlight ?? 0;
  if (max <= 0) return () => true;
  let inFlight = 0;
  const release = () => {
    inFlight -= 1;
    deps.metrics.webhooksInFlight.dec();
  };
  const warn = createWindowedWarn(
    deps.logger,
    'webhooks refused 503 overloaded: INGEST_MAX_IN_FLIGHT requests already in flight (providers retry)',
    { fields: { maxInFlight: max } },
  );
  return (res: Response, provider: Provider): boolean => {
    // guard: ingest-admission-cap
    if (inFlight >= max) {
      deps.metrics.webhookRequests.inc({ provider, outcome: 'overloaded' });
      warn(provider);
      // The body is left unread: Node discards it after the answer and keeps the connection.
      res.setHeader('Retry-After', '1');
      sendError(res, 503, 'overloaded', 'too many webhooks in flight; retry later');
      return false;
    }
    inFlight += 1;
    deps.metrics.webhooksInFlight.inc();
    // guard: ingest-admission-release
    res.once('close', release);
    return true;
  };
}

/**
 * Adds POST /webhooks/stripe, /webhooks/revenuecat, /webhooks/apple and /webhooks/google-play to
 * `app`. Each route is ONE handler (its steps called in turn, not as Express layers, each of which
 * costs every request a router step): the checks before the body is read, the raw body, then the
 * webhook itself.
 */
export function useWebhookRoutes(app: Router, deps: WebhookRouteDeps): void {
  const refuseFailedAuth = failedAuthLimiter(deps);
  const nowMs = deps.nowMs ?? Date.now;
  const rawJson = express.raw({ type: 'application/json', limit: deps.bodyLimitBytes });
  const count = outcomeCounter(deps.metrics);
  const admit = admissionControl(deps);

  /**
   * A webhook route: `before` (true: answered), the checks before reading, the raw body read
   * (its errors go to the error handler), then `handle`, whose failures go there too.
   */
  function webhookRoute(
    provider: Provider,
    before: (req: Request, res: Response) => boolean,
    handle: (req: Request, res: Response) => Promise<void>,
  ) {
    const refuse = refuseBeforeReading(provider, deps.metrics, deps.bodyLimitBytes);
    return (req: Request, res: Response, next: NextFunction): void => {
      if (!admit(res, provider) || before(req, res) || refuse(req, res)) return;
      rawJson(req, res, (error?: unknown) => {
        if (error) return next(error);
        handle(req, res).catch(next);
      });
    };
  }

  /**
   * Only a body the inbox cannot key (no usable event id or type, or not a JSON object) is
   * refused; everything else an authenticated provider sends is stored for the worker to judge.
   */
  async function store(provider: Provider, req: Request, res: Response, toDraft: () => InboxEventDraft): Promise<void> {
    let draft: InboxEventDraft;
    try {
      draft = toDraft();
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error;
      deps.metrics.webhookRequests.inc({ provider, outcome: 'bad_request' });
      return sendError(res, 400, 'invalid_event', error.message);
    }
    const result = await deps.inbox.accept(draft);
    const log = () => ({
      provider,
      providerEventId: draft.providerEventId,
      type: draft.type,
      userId: draft.userId,
      ...(draft.providerAccountId ? { providerAccountId: draft.providerAccountId } : {}),
    });
    switch (result.kind) {
      case 'accepted':
      case 'duplicate':
        count(provider, result.kind);
        // Every accepted webhook is a row in the inbox (the record), and a duplicate is the row
        // it repeats; this line is for debugging.
        if (deps.logger.isLevelEnabled('debug')) {
          req.log.debug({ ...log(), inboxEventId: result.inboxEventId }, `webhook ${result.kind}`);
        }
        answer200(res, result.kind, draft.providerEventId);
        return;
      case 'unavailable':
        count(provider, 'unavailable');
        req.log.error(log(), 'database unavailable; provider will retry');
        return sendError(res, 503, 'database_unavailable', 'cannot store the event right now; retry later');
      default: {
        const exhaustive: never = result;
        throw new Error(`unhandled outcome ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  app.post(
    '/webhooks/stripe',
    webhookRoute(
      'stripe',
      () => false,
      async (req, res) => {
        const body = readRawBody(req, res, 'stripe', deps.metrics);
        if (!body) return;
        if (deps.stripeWebhookSecrets.length === 0) {
          deps.metrics.webhookRequests.inc({ provider: 'stripe', outcome: 'unavailable' });
          req.log.error('a Stripe webhook arrived but STRIPE_WEBHOOK_SECRETS is empty');
          return sendError(res, 503, 'not_configured', 'Stripe webhooks are not configured');
        }
        const check = verifyStripeSignature({
          // The text the SDK would decode the bytes to (fatal UTF-8 succeeded, BOM dropped alike).
          rawBody: body.text,
          header: req.get('stripe-signature'),
          secrets: deps.stripeWebhookSecrets,
          toleranceSeconds: deps.stripeToleranceSeconds,
          nowMs: nowMs(),
        });
        if (!check.ok) {
          return refuseFailedAuth(req, res, 'stripe', () => {
            deps.metrics.webhookRequests.inc({ provider: 'stripe', outcome: 'bad_signature' });
            // guard: ingest-signature-log-request-logger
            req.log.warn({ provider: 'stripe', reason: check.reason }, 'webhook signature rejected');
            sendError(res, 400, 'invalid_signature', check.reason);
          });
        }
        await store('stripe', req, res, () => toStripeInboxDraftFromBody(body.text));
      },
    ),
  );

  app.post(
    '/webhooks/revenuecat',
    webhookRoute(
      'revenuecat',
      // Authorization is checked before the body is read: an unauthenticated sender gets nothing parsed.
      (req, res) => {
        if (deps.revenueCatAuthorizations.length === 0) {
          deps.metrics.webhookRequests.inc({ provider: 'revenuecat', outcome: 'unavailable' });
          req.log.error('a RevenueCat webhook arrived but REVENUECAT_WEBHOOK_AUTH is empty');
          sendError(res, 503, 'not_configured', 'RevenueCat webhooks are not configured');
          return true;
        }
        // RevenueCat sends the configured value verbatim (no HMAC, no timestamp).
        if (!matchesAnySecret(req.get('authorization'), deps.revenueCatAuthorizations)) {
          refuseFailedAuth(req, res, 'revenuecat', () => {
            deps.metrics.webhookRequests.inc({ provider: 'revenuecat', outcome: 'unauthorized' });
            req.log.warn({ provider: 'revenuecat' }, 'webhook authorization rejected');
            sendError(res, 401, 'unauthorized', 'missing or wrong Authorization header');
          });
          return true;
        }
        return false;
      },
      async (req, res) => {
        const body = readRawBody(req, res, 'revenuecat', deps.metrics);
        if (!body) return;
        await store('revenuecat', req, res, () => toRevenueCatInboxDraftFromBody(body.text));
      },
    ),
  );

  const apple = { verify: deps.appleNotifications, metrics: deps.metrics, readRawBody, refuseFailedAuth, store };
  app.post('/webhooks/apple', webhookRoute('apple', appleNotConfigured(apple), appleWebhookHandle(apple)));
  const googlePlay = { settings: deps.googlePlay, metrics: deps.metrics, readRawBody, refuseFailedAuth, store };
  useGooglePlayWebhookRoute(app, { ...googlePlay, webhookRoute });
}
