import { z } from 'zod';

/**
 * How a route describes itself for the OpenAPI document (`GET /openapi.json`, built by
 * openapi/openapi-document.ts). Each route module exports the docs of the routes it mounts, next to
 * them, made of the same zod schemas that parse its requests and type its answers; the document
 * builder adds what every route of a surface shares (the bearer scheme, 401/429/503, Request-Id,
 * Idempotency-Key on the /v1 POSTs).
 */
export interface RouteDoc {
  method: 'get' | 'post';
  /** The full OpenAPI path, parameters in braces: `/v1/users/{userId}/wallet`. */
  path: `/v1/${string}` | `/admin/${string}`;
  summary: string;
  description?: string;
  /** Path parameters other than the /v1 `{userId}`, which every /v1 route shares. */
  params?: z.ZodObject;
  query?: z.ZodType;
  body?: z.ZodType;
  /** A /v1 POST under `Idempotency-Key` (http/idempotency.ts). */
  idempotent?: boolean;
  answers: Record<number, AnswerDoc>;
}

export interface AnswerDoc {
  description: string;
  schema: z.ZodType;
  /** The error codes of an error answer (errorDoc): the document merges codes every route shares. */
  codes?: readonly [string, ...string[]];
  /** Answer headers besides Request-Id (and Idempotent-Replayed, added for idempotent routes). */
  headers?: Record<string, { description: string; schema: z.ZodType }>;
}

/** The one error shape of every Tally answer (platform's sendError), its codes listed per answer. */
export function errorBodySchema(codes: readonly [string, ...string[]]) {
  return z.strictObject({ error: z.strictObject({ code: z.enum(codes), message: z.string() }) });
}

/** An error answer of a route: `{"error":{"code","message"}}` with one of `codes`. */
export function errorDoc(description: string, codes: readonly [string, ...string[]]): AnswerDoc {
  return { description, schema: errorBodySchema(codes), codes };
}

/** A JSON answer of a route. */
export function answerDoc(description: string, schema: z.ZodType): AnswerDoc {
  return { description, schema };
}

/** A keyset cursor as answers carry it: the next page's `cursor`, or null on the last page. */
export const nextCursorSchema = z.string().nullable();

/** The Retry-After header of a 503/429 that names a delay. */
export const retryAfterHeader = {
  'Retry-After': { description: 'seconds to wait before retrying', schema: z.string() },
};
