import type { DB } from '@tally/billing-core';
import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { type RouteAnswer, sendAnswer } from './answer';
import { withoutAnswerDeadline } from './answer-deadline';
import { type AuditedTransaction, auditedHandler } from './audit-admin-actions';
import { adminRoutePrefix, type Route, type RouteHandlerInput, userRoutePrefix } from './define-route';
import type { AnsweredByKey, IdempotentPosts } from './idempotency';
import { noBodySchema, parseOrAnswer } from './params';
import type { RouteServices } from './route-services';
import { userScopeOf } from './user-scope';

/** `/holds/{holdId}/capture` as Express spells it: `/holds/:holdId/capture`. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/**
 * The input of a request as its definition parses it, or the 400 of the first bad part: each
 * path parameter, the query (unknown keys are "parameters"), the body (a POST without a body
 * schema takes none; a missing body is `{}`).
 */
export function parseRouteInput(
  route: Route,
  req: Request,
): { ok: true; input: Pick<RouteHandlerInput, 'params' | 'query' | 'body'> } | { ok: false; answer: RouteAnswer } {
  const params: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(route.params ?? {})) {
    const parsed = parseOrAnswer(schema, (req.params as Record<string, string>)[name]);
    if (!parsed.ok) return parsed;
    params[name] = parsed.value;
  }
  let query: unknown;
  if (route.query) {
    const parsed = parseOrAnswer(route.query, req.query, 'parameter');
    if (!parsed.ok) return parsed;
    query = parsed.value;
  }
  let body: unknown;
  // guard: release-body-fields
  const bodySchema: z.ZodType | undefined = route.body ?? (route.method === 'post' ? noBodySchema : undefined);
  if (bodySchema) {
    const parsed = parseOrAnswer(bodySchema, req.body ?? {});
    if (!parsed.ok) return parsed;
    body = route.body ? parsed.value : undefined;
  }
  return { ok: true, input: { params, query, body } };
}

export interface MountDeps {
  services: RouteServices;
  /** The /v1 POSTs' Idempotency-Key (createIdempotentPosts). */
  idempotency: IdempotentPosts;
  /** Where the admin routes' audit rows go. */
  db: Kysely<DB>;
}

/**
 * A router of `routes`, all of one surface, each at its path relative to the surface's mount:
 * /v1 routes relative to `/v1/users/{userId}` (mount it with createUserRoutes), /admin routes
 * relative to `/admin`. The definition decides the rest: a /v1 POST takes its Idempotency-Key
 * as it says, an /admin POST is audited as it says, a provider call lifts the answer deadline.
 */
export function mountRoutes(routes: readonly Route[], deps: MountDeps): Router {
  const router = Router();
  for (const route of routes) {
    const v1 = route.path.startsWith(`${userRoutePrefix}/`);
    const prefix = v1 ? userRoutePrefix : adminRoutePrefix;
    if (!route.path.startsWith(`${prefix}/`))
      throw new Error(`${route.path} is neither a /v1 user route nor an /admin one`);
    const handlers = route.providerCall ? [withoutAnswerDeadline, handlerOf(route, deps)] : [handlerOf(route, deps)];
    router[route.method](toExpressPath(route.path.slice(prefix.length)), ...handlers);
  }
  return router;
}

function handlerOf(route: Route, deps: MountDeps): RequestHandler {
  const v1 = route.path.startsWith(`${userRoutePrefix}/`);
  const run = async (
    req: Request,
    res: Response,
    extra: Pick<RouteHandlerInput, 'claim' | 'key' | 'audited'>,
  ): Promise<RouteAnswer | AnsweredByKey> => {
    const parsed = parseRouteInput(route, req);
    if (!parsed.ok) return parsed.answer;
    const input: RouteHandlerInput = { ...parsed.input, log: req.log, ...extra };
    if (v1) input.user = userScopeOf(res);
    return route.handler(input, deps.services);
  };
  const answered = (answer: RouteAnswer | AnsweredByKey): RouteAnswer => {
    if ('verdict' in answer) throw new Error(`${route.path}: only an in-transaction POST may answer by its key`);
    return answer;
  };
  if (route.idempotency === 'claimed') {
    return deps.idempotency.claimed(async (req, res, claim) => answered(await run(req, res, { claim })));
  }
  if (route.idempotency === 'in-transaction') {
    return deps.idempotency.inTransaction((req, res, key) => run(req, res, { key }));
  }
  if (route.audit) {
    // guard: audit-admin-api
    return auditedHandler(
      {
        db: deps.db,
        surface: 'api',
        spec: route.audit,
        recordOf: (answer: RouteAnswer) => ({ statusCode: answer.status, body: answer.body }),
        send: sendAnswer,
      },
      async (req, res, audited: AuditedTransaction) => answered(await run(req, res, { audited })),
    );
  }
  return async (req, res) => sendAnswer(res, answered(await run(req, res, {})));
}
