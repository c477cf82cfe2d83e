import {
  type AdminActionName,
  type AdminActionRecord,
  type AdminSurface,
  AUDIT_STARTED_OUTCOME,
  type DB,
  keyFingerprint,
  recordAdminAction,
  runAuditedAction,
} from '@tally/billing-core';
import { notFoundHandler, sendError } from '@tally/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Kysely, Transaction } from 'kysely';
import { failureAnswerOf } from './answer';
import { basicPasswordOf, basicUserOf } from './require-admin-key-or-basic';
import { bearerTokenOf } from './require-bearer';

/** What an audited route does, as its definition says: the action's name and the row it acts on. */
export interface AuditSpec {
  action: AdminActionName;
  /** The route parameter naming the row acted on (`{ kind: 'inbox_event', param: 'id' }`). */
  target?: { kind: string; param: string };
  /**
   * The action is one database transaction that writes its row in it (the handler's `audited`):
   * no `started` row before it. Every other audited action (it spans Redis or Stripe, which no
   * transaction may hold) runs only once its `started` row is committed.
   */
  inTransaction?: true;
}

/** The answer as its audit row records it: the status, and the body (an `error.code` in it is the outcome). */
export interface AuditAnswer {
  statusCode: number;
  body: unknown;
}

/**
 * Runs an action that is one database transaction with the request's audit row in that
 * transaction (billing-core's `runAuditedAction`): `answerOf` says what the route answers for the
 * result, before the commit. Once it committed, no other row is written for the request.
 */
export type AuditedTransaction = <T>(
  act: (trx: Transaction<DB>) => Promise<T>,
  answerOf: (result: T) => AuditAnswer,
) => Promise<T>;

type AuditIdentity = Omit<AdminActionRecord, 'statusCode' | 'outcome' | 'answer'>;

export interface AuditedHandlerOptions<A> {
  db: Kysely<DB>;
  surface: AdminSurface;
  /** undefined: an action no definition names (a dashboard action of Bull Board's), audited under its route. */
  spec: AuditSpec | undefined;
  /** The answer as the row records it. */
  recordOf: (answer: A) => AuditAnswer;
  send: (res: Response, answer: A) => void;
}

/**
 * The one place HTTP admin actions are audited: the handler of an audited route (the admin API's
 * definitions, the console's forms, the dashboard's actions), mounted after the admin key check
 * (a refused request, a cross-site one included, changed nothing and is not recorded). It
 * records the action, the row (from the route parameters), the request's parameters and body,
 * the fingerprint of the key used and the answer, which `handle` returns instead of sending.
 *
 * An action that is one transaction writes its row inside it (`audited`), so nothing else is
 * written unless that transaction did not commit (then the answer given instead is recorded).
 * Every other action runs only after a `started` row is committed: if that row cannot be
 * written, the action does not run and the caller gets `503 audit_unavailable`. Its answer is a
 * second row, written after the action and before the answer is sent, so a caller who saw the
 * answer can find it; an answer row that fails is logged at error level and the answer still
 * goes out, since the action has happened by then and its `started` row says so.
 */
export function auditedHandler<A>(
  options: AuditedHandlerOptions<A>,
  handle: (req: Request, res: Response, audited: AuditedTransaction) => Promise<A>,
): RequestHandler {
  const { db, spec } = options;
  return async (req: Request, res: Response) => {
    const identity = identityOf(req, options.surface, spec);
    // guard: audit-started-row-http
    if (!spec?.inTransaction) {
      // Before the action: a name of the request's own when no definition names it.
      const planned = spec
        ? identity
        : { ...identity, action: `${req.method} ${identity.path}`, request: requestOf(req, {}) };
      if (!(await recordStarted(db, req, res, planned))) return;
    }
    let written = false;
    const audited: AuditedTransaction = async (act, answerOf) => {
      const { result } = await runAuditedAction(db, act, (result) => withAnswer(identity, answerOf(result)));
      written = true;
      return result;
    };
    let answer: A;
    try {
      answer = await handle(req, res, audited);
    } catch (error) {
      // The error handlers answer it: the row says what they answer.
      const failure = failureAnswerOf(error);
      if (!written)
        await recordAnswer(db, req, withAnswer(identity, { statusCode: failure.status, body: failure.body }));
      throw error;
    }
    if (!written) await recordAnswer(db, req, withAnswer(identity, options.recordOf(answer)));
    options.send(res, answer);
  };
}

/**
 * The last handler of an audited surface: a state-changing request no route took is recorded
 * (`started`, then its 404) as every other one, under its method and path.
 */
export function auditUnmatched(db: Kysely<DB>, surface: AdminSurface): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (safeMethods.has(req.method)) return next();
    const path = `${req.baseUrl}${req.path}`;
    const identity = {
      ...identityOf(req, surface, undefined),
      action: `${req.method} ${path}`,
      request: requestOf(req, {}),
    };
    if (!(await recordStarted(db, req, res, identity))) return;
    await recordAnswer(db, req, withAnswer(identity, noRouteAnswer));
    notFoundHandler(req, res);
  };
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** What platform's notFoundHandler answers. */
const noRouteAnswer: AuditAnswer = {
  statusCode: 404,
  body: { error: { code: 'not_found', message: 'no such route' } },
};

/** Writes the `started` row; false once it answered 503 because the row could not be written. */
async function recordStarted(db: Kysely<DB>, req: Request, res: Response, identity: AuditIdentity): Promise<boolean> {
  try {
    await recordAdminAction(db, { ...identity, statusCode: null, outcome: AUDIT_STARTED_OUTCOME });
    return true;
  } catch (error) {
    req.log.error({ err: error, action: identity.action }, 'admin audit row not written: action refused');
    sendError(res, 503, 'audit_unavailable', 'the audit row of this action could not be written; nothing was done');
    return false;
  }
}

async function recordAnswer(db: Kysely<DB>, req: Request, record: AdminActionRecord): Promise<void> {
  await recordAdminAction(db, record).catch((error: unknown) =>
    req.log.error({ err: error, action: record.action }, 'admin audit row not written'),
  );
}

/** Who did what to which row: the action's name and target, the request, the key's fingerprint. */
function identityOf(req: Request, surface: AdminSurface, spec: AuditSpec | undefined): AuditIdentity {
  const params = { ...req.params } as Record<string, string>;
  const targetId = spec?.target ? params[spec.target.param] : undefined;
  const key = bearerTokenOf(req) ?? basicPasswordOf(req);
  const route = req.route as { path?: unknown } | undefined;
  return {
    action: spec?.action ?? `${req.method} ${req.baseUrl}${String(route?.path)}`,
    surface,
    target: spec?.target && targetId !== undefined ? { kind: spec.target.kind, id: targetId } : null,
    method: req.method,
    path: `${req.baseUrl}${req.path}`,
    request: requestOf(req, params),
    keyFingerprint: key === undefined ? null : keyFingerprint(key),
    actor: basicUserOf(req) ?? null,
  };
}

function requestOf(req: Request, params: Record<string, string>): AuditIdentity['request'] {
  return { params, ...(isEmptyBody(req.body) ? {} : { body: req.body }) };
}

function withAnswer(identity: AuditIdentity, answer: AuditAnswer): AdminActionRecord {
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
