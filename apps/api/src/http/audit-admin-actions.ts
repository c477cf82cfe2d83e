import {
  type AdminActionName,
  type AdminSurface,
  adminActions,
  type DB,
  keyFingerprint,
  recordAdminAction,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { NextFunction, Request, Response } from 'express';
import type { Kysely } from 'kysely';
import { basicPasswordOf, basicUserOf } from './require-admin-key-or-basic';
import { bearerTokenOf } from './require-bearer';

/**
 * Names of the HTTP actions, by method and full route pattern, with the route parameter naming
 * the row acted on. A state-changing route missing here is audited all the same, under its
 * pattern; naming it lets the CLI's rows and the HTTP rows of one action read alike.
 */
const namedRoutes: Record<string, { action: AdminActionName; target?: { kind: string; param: string } }> = {
  'POST /admin/events/:id/requeue': { action: adminActions.inboxRequeue, target: { kind: 'inbox_event', param: 'id' } },
  'POST /admin/events/:id/replay': { action: adminActions.inboxReplay, target: { kind: 'inbox_event', param: 'id' } },
  'POST /admin/events/requeue': { action: adminActions.inboxRequeueByFilter },
  'POST /admin/events/replay': { action: adminActions.inboxReplayByFilter },
  'POST /admin/reconcile/stripe': { action: adminActions.reconcileStripe },
  'POST /admin/console/events/:id/requeue': {
    action: adminActions.inboxRequeue,
    target: { kind: 'inbox_event', param: 'id' },
  },
  'POST /admin/console/events/:id/replay': {
    action: adminActions.inboxReplay,
    target: { kind: 'inbox_event', param: 'id' },
  },
  'POST /admin/console/reconcile': { action: adminActions.reconcileStripe },
  'PUT /admin/queues/api/queues/:queueName/:jobId/retry': {
    action: adminActions.queueRetryJob,
    target: { kind: 'queue_job', param: 'jobId' },
  },
  'PUT /admin/queues/api/queues/:queueName/retry/:queueStatus': { action: adminActions.queueRetryAll },
};

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What a handler that does not answer JSON (the console redirects) leaves for the audit row:
 * `res.locals[auditAnswerKey] = { … }`, an `error.code` in it being the outcome.
 */
export const auditAnswerKey = 'auditAnswer';

/**
 * The one place HTTP admin actions are audited. Mounted after the admin key check (a refused
 * request, a cross-site one included, changed nothing and is not recorded), it records every
 * state-changing request that reached a route: the action, the row (from the route parameters),
 * the request's parameters and body, the fingerprint of the key used and the answer. The row is
 * written before the answer leaves (the end of the response waits for it), so a caller who saw
 * the answer can find the row; an audit write that fails is logged at error level and the answer
 * still goes out, since the action itself has happened by then.
 */
export function auditAdminActions(deps: { db: Kysely<DB>; logger: Logger; surface: AdminSurface }) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (safeMethods.has(req.method)) return next();
    const key = bearerTokenOf(req) ?? basicPasswordOf(req);
    let answer: unknown;
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      answer = body;
      return json(body);
    };
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let recorded = false;
    res.end = ((...args: unknown[]) => {
      if (recorded) return end(...args);
      recorded = true;
      const route = req.route as { path?: unknown } | undefined;
      if (typeof route?.path !== 'string') return end(...args);
      const pattern = `${req.method} ${req.baseUrl}${route.path}`;
      const named = namedRoutes[pattern];
      const params = { ...req.params } as Record<string, string>;
      const body = answer ?? res.locals[auditAnswerKey];
      const targetId = named?.target ? params[named.target.param] : undefined;
      const errorCode = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
      recordAdminAction(deps.db, {
        action: named?.action ?? pattern,
        surface: deps.surface,
        target: named?.target && targetId !== undefined ? { kind: named.target.kind, id: targetId } : null,
        method: req.method,
        path: `${req.baseUrl}${req.path}`,
        request: { params, ...(isEmptyBody(req.body) ? {} : { body: req.body }) },
        keyFingerprint: key === undefined ? null : keyFingerprint(key),
        actor: basicUserOf(req) ?? null,
        statusCode: res.statusCode,
        outcome: typeof errorCode === 'string' ? errorCode : res.statusCode < 400 ? 'ok' : `http_${res.statusCode}`,
        answer: body,
      })
        .catch((error: unknown) => deps.logger.error({ err: error, action: pattern }, 'admin audit row not written'))
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}

function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0);
}
