import {
  type AdminActionName,
  type AdminActionRecord,
  type AdminSurface,
  AUDIT_STARTED_OUTCOME,
  adminActions,
  type DB,
  keyFingerprint,
  recordAdminAction,
  runAuditedAction,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import type { NextFunction, Request, Response } from 'express';
import type { Kysely, Transaction } from 'kysely';
import { basicPasswordOf, basicUserOf } from './require-admin-key-or-basic';
import { bearerTokenOf } from './require-bearer';

interface NamedRoute {
  action: AdminActionName;
  target?: { kind: string; param: string };
  /**
   * The route runs its action and its audit row in one transaction (`runAuditedRequest`), so no
   * `started` row is written before it. Every other state-changing request gets one.
   */
  oneTransaction?: true;
}

/**
 * Names of the HTTP actions, by method and full route pattern, with the route parameter naming
 * the row acted on. A state-changing route missing here is audited all the same, under its
 * pattern; naming it lets the CLI's rows and the HTTP rows of one action read alike.
 */
const namedRoutes: Record<string, NamedRoute> = {
  'POST /admin/events/:id/requeue': {
    action: adminActions.inboxRequeue,
    target: { kind: 'inbox_event', param: 'id' },
    oneTransaction: true,
  },
  'POST /admin/events/:id/replay': {
    action: adminActions.inboxReplay,
    target: { kind: 'inbox_event', param: 'id' },
    oneTransaction: true,
  },
  'POST /admin/events/requeue': { action: adminActions.inboxRequeueByFilter, oneTransaction: true },
  'POST /admin/events/replay': { action: adminActions.inboxReplayByFilter, oneTransaction: true },
  'POST /admin/reconcile/stripe': { action: adminActions.reconcileStripe },
  'POST /admin/console/events/:id/requeue': {
    action: adminActions.inboxRequeue,
    target: { kind: 'inbox_event', param: 'id' },
    oneTransaction: true,
  },
  'POST /admin/console/events/:id/replay': {
    action: adminActions.inboxReplay,
    target: { kind: 'inbox_event', param: 'id' },
    oneTransaction: true,
  },
  'POST /admin/console/reconcile': { action: adminActions.reconcileStripe },
  'POST /admin/app-webhooks/messages/:id/redeliver': {
    action: adminActions.appWebhookRedeliver,
    target: { kind: 'app_webhook_message', param: 'id' },
    oneTransaction: true,
  },
  'POST /admin/console/app-webhooks/:id/redeliver': {
    action: adminActions.appWebhookRedeliver,
    target: { kind: 'app_webhook_message', param: 'id' },
    oneTransaction: true,
  },
  'POST /admin/users/:userId/grants': {
    action: adminActions.userGrant,
    target: { kind: 'user', param: 'userId' },
    oneTransaction: true,
  },
  'POST /admin/users/:userId/lots/:lotId/void': {
    action: adminActions.lotVoid,
    target: { kind: 'credit_lot', param: 'lotId' },
    oneTransaction: true,
  },
  'POST /admin/console/users/:userId/grants': {
    action: adminActions.userGrant,
    target: { kind: 'user', param: 'userId' },
    oneTransaction: true,
  },
  'POST /admin/console/users/:userId/lots/:lotId/void': {
    action: adminActions.lotVoid,
    target: { kind: 'credit_lot', param: 'lotId' },
    oneTransaction: true,
  },
  'POST /admin/users/:userId/holds/:holdId/release': {
    action: adminActions.holdRelease,
    target: { kind: 'hold', param: 'holdId' },
    oneTransaction: true,
  },
  'POST /admin/console/users/:userId/holds/:holdId/release': {
    action: adminActions.holdRelease,
    target: { kind: 'hold', param: 'holdId' },
    oneTransaction: true,
  },
  'PUT /admin/queues/api/queues/:queueName/:jobId/retry': {
    action: adminActions.queueRetryJob,
    target: { kind: 'queue_job', param: 'jobId' },
  },
  'PUT /admin/queues/api/queues/:queueName/retry/:queueStatus': { action: adminActions.queueRetryAll },
};

/** Each named route as a matcher of a request's method and full path, before the router has matched it. */
const namedRouteMatchers = Object.entries(namedRoutes).map(([pattern, named]) => {
  const [method = '', path = ''] = pattern.split(' ');
  const params: string[] = [];
  const source = path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { pattern, method, named, params, regex: new RegExp(`^${source}/?$`) };
});

/** The named route a request is for, with its parameters, as the router will match it. */
function namedRouteOf(
  method: string,
  path: string,
): { pattern: string; named: NamedRoute; params: Record<string, string> } | undefined {
  for (const matcher of namedRouteMatchers) {
    if (matcher.method !== method) continue;
    const match = matcher.regex.exec(path);
    if (!match) continue;
    const params: Record<string, string> = {};
    try {
      matcher.params.forEach((name, index) => {
        params[name] = decodeURIComponent(match[index + 1] ?? '');
      });
    } catch {
      return undefined;
    }
    return { pattern: matcher.pattern, named: matcher.named, params };
  }
  return undefined;
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What a handler that does not answer JSON (the console redirects) leaves for the audit row:
 * `res.locals[auditAnswerKey] = { … }`, an `error.code` in it being the outcome.
 */
export const auditAnswerKey = 'auditAnswer';
/** Set by the middleware: the surface and key of this request, for a row written in a route's transaction. */
const auditSurfaceKey = 'auditSurface';
/** Set once a route's transaction committed the request's row: the middleware writes none. */
const auditWrittenKey = 'auditWritten';
/** Set by a route that writes its row in its transaction: who did what to which row. */
const auditIdentityKey = 'auditIdentity';
/** Set by the middleware with the `started` row it wrote: the identity of the answer row if no route matched. */
const auditStartedKey = 'auditStarted';

/**
 * The one place HTTP admin actions are audited. Mounted after the admin key check (a refused
 * request, a cross-site one included, changed nothing and is not recorded), it records every
 * state-changing request that reached a route: the action, the row (from the route parameters),
 * the request's parameters and body, the fingerprint of the key used and the answer.
 *
 * Actions that are one database transaction (requeue, replay, redeliver) write their row inside
 * it (`runAuditedRequest`), so the middleware writes nothing for them unless that transaction
 * failed (then it records the error answered). Every other action (a dashboard action, a
 * reconciliation: they span calls to Redis or Stripe, which no transaction may hold) runs only
 * after a `started` row is committed here, before the request reaches its route: if that row
 * cannot be written, the action does not run and the caller gets `503 audit_unavailable`. Its
 * answer is a second row, written after the action, before the answer leaves (the end of the
 * response waits for it), so a caller who saw the answer can find it; an answer row that fails is
 * logged at error level and the answer still goes out, since the action has happened by then and
 * its `started` row says so.
 */
export function auditAdminActions(deps: { db: Kysely<DB>; surface: AdminSurface }) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (safeMethods.has(req.method)) return next();
    res.locals[auditSurfaceKey] = deps.surface;
    const planned = plannedIdentityOf(req, deps.surface);
    if (planned.oneTransaction) {
      recordAnswerOnEnd(deps, req, res);
      return next();
    }
    recordAdminAction(deps.db, { ...planned.identity, statusCode: null, outcome: AUDIT_STARTED_OUTCOME })
      .then(
        () => {
          res.locals[auditStartedKey] = planned.identity;
          recordAnswerOnEnd(deps, req, res);
          next();
        },
        (error: unknown) => {
          req.log.error({ err: error, action: planned.identity.action }, 'admin audit row not written: action refused');
          sendError(
            res,
            503,
            'audit_unavailable',
            'the audit row of this action could not be written; nothing was done',
          );
        },
      )
      .catch(next);
  };
}

/** Writes the request's answer row as the response ends, unless a route's transaction committed it. */
function recordAnswerOnEnd(deps: { db: Kysely<DB> }, req: Request, res: Response): void {
  let answer: unknown;
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    answer = body;
    return json(body);
  };
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let recorded = false;
  res.end = ((...args: unknown[]) => {
    if (recorded || res.locals[auditWrittenKey] === true) return end(...args);
    recorded = true;
    const record = auditRecordOf(req, res, {
      statusCode: res.statusCode,
      body: answer ?? res.locals[auditAnswerKey],
    });
    if (record === undefined) return end(...args);
    recordAdminAction(deps.db, record)
      .catch((error: unknown) => req.log.error({ err: error, action: record.action }, 'admin audit row not written'))
      .finally(() => end(...args));
    return res;
  }) as Response['end'];
}

/**
 * Who does what to which row, from the request alone (before the router matched it): the named
 * route it is for, or its method and path. Also whether that route audits in its own transaction.
 */
function plannedIdentityOf(req: Request, surface: AdminSurface): { identity: AuditIdentity; oneTransaction: boolean } {
  const path = `${req.baseUrl}${req.path}`;
  const route = namedRouteOf(req.method, path);
  const key = bearerTokenOf(req) ?? basicPasswordOf(req);
  const targetId = route?.named.target ? route.params[route.named.target.param] : undefined;
  return {
    oneTransaction: route?.named.oneTransaction === true,
    identity: {
      action: route?.named.action ?? `${req.method} ${path}`,
      surface,
      target: route?.named.target && targetId !== undefined ? { kind: route.named.target.kind, id: targetId } : null,
      method: req.method,
      path,
      request: { params: route?.params ?? {}, ...(isEmptyBody(req.body) ? {} : { body: req.body }) },
      keyFingerprint: key === undefined ? null : keyFingerprint(key),
      actor: basicUserOf(req) ?? null,
    },
  };
}

/**
 * Runs a route's action that is one database transaction with the request's audit row in that
 * transaction (`runAuditedAction`). `answerOf` says what the route will answer for the result (its
 * status and body, a refusal's `error.code` being the outcome) before the commit; once the commit
 * succeeded the middleware writes no second row. If the transaction fails, the middleware records
 * the error answered, under this route's action and target. Only for routes behind `auditAdminActions`.
 */
export async function runAuditedRequest<T>(
  req: Request,
  res: Response,
  db: Kysely<DB>,
  act: (trx: Transaction<DB>) => Promise<T>,
  answerOf: (result: T) => { statusCode: number; body: unknown },
): Promise<T> {
  const identity = auditIdentityOf(req, res);
  if (identity === undefined) throw new Error(`${req.method} ${req.originalUrl}: not an audited admin route`);
  // Kept for the middleware: an error answered later (by the app's error handler) is recorded
  // outside this route, where its pattern and parameters are no longer on the request.
  res.locals[auditIdentityKey] = identity;
  const { result } = await runAuditedAction(db, act, (result) => withAnswer(identity, answerOf(result)));
  res.locals[auditWrittenKey] = true;
  return result;
}

type AuditIdentity = Omit<AdminActionRecord, 'statusCode' | 'outcome' | 'answer'>;

/** The audit row of a request that reached a route, given its answer; undefined off the audited routers. */
function auditRecordOf(
  req: Request,
  res: Response,
  answer: { statusCode: number; body: unknown },
): AdminActionRecord | undefined {
  const identity =
    (res.locals[auditIdentityKey] as AuditIdentity | undefined) ??
    auditIdentityOf(req, res) ??
    (res.locals[auditStartedKey] as AuditIdentity | undefined);
  return identity === undefined ? undefined : withAnswer(identity, answer);
}

/** Who did what to which row: the route's action name and target, the request, the key's fingerprint. */
function auditIdentityOf(req: Request, res: Response): AuditIdentity | undefined {
  const surface = res.locals[auditSurfaceKey] as AdminSurface | undefined;
  const route = req.route as { path?: unknown } | undefined;
  if (surface === undefined || typeof route?.path !== 'string') return undefined;
  const key = bearerTokenOf(req) ?? basicPasswordOf(req);
  const pattern = `${req.method} ${req.baseUrl}${route.path}`;
  const named = namedRoutes[pattern];
  const params = { ...req.params } as Record<string, string>;
  const targetId = named?.target ? params[named.target.param] : undefined;
  return {
    action: named?.action ?? pattern,
    surface,
    target: named?.target && targetId !== undefined ? { kind: named.target.kind, id: targetId } : null,
    method: req.method,
    path: `${req.baseUrl}${req.path}`,
    request: { params, ...(isEmptyBody(req.body) ? {} : { body: req.body }) },
    keyFingerprint: key === undefined ? null : keyFingerprint(key),
    actor: basicUserOf(req) ?? null,
  };
}

function withAnswer(identity: AuditIdentity, answer: { statusCode: number; body: unknown }): AdminActionRecord {
  const errorCode = (answer.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return {
    ...identity,
    statusCode: answer.statusCode,
    outcome: typeof errorCode === 'string' ? errorCode : answer.statusCode < 400 ? 'ok' : `http_${answer.statusCode}`,
    answer: answer.body,
  };
}

function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0);
}
