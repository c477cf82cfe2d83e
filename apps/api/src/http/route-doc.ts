import { z } from 'zod';

/**
 * How a route's answer is described in the OpenAPI document (`GET /openapi.json`, built by
 * openapi/openapi-document.ts from the definitions' `answers`), made of the same zod schemas the
 * route builds its answers by. The document adds what every route of a surface shares (the bearer
 * scheme, 401/429/503, Request-Id, the idempotency answers of the /v1 POSTs).
 */
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
