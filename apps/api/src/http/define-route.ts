import type { IdempotencyClaim, IdempotentRequestKey } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { z } from 'zod';
import type { RouteAnswer } from './answer';
import type { AuditedTransaction, AuditSpec } from './audit-admin-actions';
import type { AnsweredByKey } from './idempotency';
import type { AnswerDoc } from './route-doc';
import type { RouteServices } from './route-services';
import type { UserScope } from './user-scope';

/** The path every /v1 route starts with: each is about one user, resolved once (createUserRoutes). */
export const userRoutePrefix = '/v1/users/{userId}';
export const adminRoutePrefix = '/admin';

/** A route's full path in OpenAPI's syntax, the only one written: parameters in braces. */
export type RoutePath = `${typeof userRoutePrefix}/${string}` | `${typeof adminRoutePrefix}/${string}`;

/**
 * How a /v1 POST keeps its `Idempotency-Key` (http/idempotency.ts): `claimed` before the handler
 * runs (the handler gets the claim), or `in-transaction`, the use case keeping it in its one
 * transaction (the handler gets the key and may answer AnsweredByKey).
 */
export type Idempotency = 'claimed' | 'in-transaction';

type ParamShape = Record<string, z.ZodType>;

/** What a handler is given: its parsed input, its request's logger, and what its definition asks for. */
export type RouteInput<Path, P, Q, B, I, A> = {
  params: { [K in keyof P]: P[K] extends z.ZodType ? z.output<P[K]> : never };
  query: Q extends z.ZodType ? z.output<Q> : undefined;
  body: B extends z.ZodType ? z.output<B> : undefined;
  log: Logger;
} & (Path extends `${typeof userRoutePrefix}/${string}` ? { user: UserScope } : unknown) &
  (I extends 'claimed'
    ? { claim: IdempotencyClaim | undefined }
    : I extends 'in-transaction'
      ? { key: IdempotentRequestKey | undefined }
      : unknown) &
  (A extends { inTransaction: true } ? { audited: AuditedTransaction } : unknown);

/**
 * One route, defined once: the router, the audit, the idempotency claim and the OpenAPI document
 * are all mounted from it (http/mount-routes.ts, openapi/openapi-document.ts), so none of them can
 * drift from the others. Its input is parsed by its schemas before the handler runs, in this
 * order, the first bad one answering 400: each path parameter (in the order of `params`), the
 * query, the body (a POST without `body` takes none: a field sent is a 400). The handler returns
 * its answer; the mount sends it.
 */
/**
 * `put`: a write that is idempotent by itself (the same body again changes nothing): no
 * Idempotency-Key. `delete` likewise (removing what is gone changes nothing); it takes no body.
 */
export type RouteMethod = 'get' | 'post' | 'put' | 'delete';

export interface RouteDefinition<Path extends RoutePath, P extends ParamShape, Q, B, I, A> {
  method: RouteMethod;
  path: Path;
  summary: string;
  description?: string;
  /** A schema per path parameter in braces (the /v1 `{userId}` aside: every /v1 route shares it). */
  params?: P;
  query?: Q;
  body?: B;
  answers: Record<number, AnswerDoc>;
  /** Every /v1 POST states it. */
  idempotency?: I;
  /** Every /admin POST and PUT states it: what the audit row names. */
  audit?: A;
  /**
   * The route waits on a provider (Stripe, RevenueCat) under that call's own timeout, longer than
   * API_ANSWER_DEADLINE_MS: the deadline stops once the user is resolved.
   */
  providerCall?: true;
  handler: (
    input: RouteInput<Path, P, Q, B, I, A>,
    services: RouteServices,
  ) => Promise<I extends 'in-transaction' ? RouteAnswer | AnsweredByKey : RouteAnswer>;
}

/** A definition as the mount and the document read it. */
export interface Route {
  method: RouteMethod;
  path: RoutePath;
  summary: string;
  description?: string;
  params?: ParamShape;
  query?: z.ZodType;
  body?: z.ZodType;
  answers: Record<number, AnswerDoc>;
  idempotency?: Idempotency;
  audit?: AuditSpec;
  providerCall?: true;
  handler: (input: RouteHandlerInput, services: RouteServices) => Promise<RouteAnswer | AnsweredByKey>;
}

export interface RouteHandlerInput {
  params: Record<string, unknown>;
  query: unknown;
  body: unknown;
  log: Logger;
  user?: UserScope;
  claim?: IdempotencyClaim | undefined;
  key?: IdempotentRequestKey | undefined;
  audited?: AuditedTransaction;
}

/** The names in braces of a path, in order. */
export function pathParamsOf(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((match) => match[1] as string);
}

/**
 * Defines a route (see RouteDefinition). Throws, when its module loads, for a definition that
 * contradicts itself: a path parameter without its schema or a schema without its parameter, a
 * /v1 POST that does not say how it keeps its Idempotency-Key, an /admin POST or PUT that does not
 * say what it audits, idempotency or an audit on a route that cannot have them.
 */
export function defineRoute<
  const Path extends RoutePath,
  P extends ParamShape = Record<never, z.ZodType>,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  I extends Idempotency | undefined = undefined,
  A extends AuditSpec | undefined = undefined,
>(definition: RouteDefinition<Path, P, Q, B, I, A>): Route {
  const route = definition as unknown as Route;
  const where = `${route.method.toUpperCase()} ${route.path}`;
  const v1 = route.path.startsWith(`${userRoutePrefix}/`);
  const named = pathParamsOf(v1 ? route.path.slice(userRoutePrefix.length) : route.path);
  const declared = Object.keys(route.params ?? {});
  if (named.join() !== declared.join()) {
    throw new Error(`${where}: its params (${declared.join(', ')}) are not its path's {${named.join('}, {')}}`);
  }
  // guard: idempotency-every-post-wrapped
  if (route.method === 'post' && v1 && !route.idempotency) {
    throw new Error(`${where} does not say how it takes Idempotency-Key (idempotency: 'claimed' or 'in-transaction')`);
  }
  if (route.idempotency && !(v1 && route.method === 'post'))
    throw new Error(`${where}: only a /v1 POST takes Idempotency-Key`);
  if (route.method !== 'get' && !v1 && !route.audit) throw new Error(`${where} does not say what it audits (audit)`);
  if (route.audit && (v1 || route.method === 'get')) throw new Error(`${where}: only an /admin POST or PUT is audited`);
  if (route.method === 'put' && !route.body) throw new Error(`${where}: a PUT takes a body`);
  if (route.method === 'delete' && route.body) throw new Error(`${where}: a DELETE takes no body`);
  if (route.providerCall && !v1) throw new Error(`${where}: only a /v1 route has the answer deadline to lift`);
  return route;
}
