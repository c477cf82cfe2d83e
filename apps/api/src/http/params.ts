import type { Response } from 'express';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer, sendAnswer } from './answer';

/** Postgres text and jsonb cannot hold NUL: a value carrying one is the caller's mistake (400), not a 500. */
const noNul = (value: string) => !value.includes('\u0000');

export const userIdSchema = z.string().min(1).max(255).refine(noNul, { message: 'must not contain NUL' });

/**
 * Whether a parsed JSON value holds a NUL in any string or key (jsonb refuses them). Iterative,
 * so a deeply nested body cannot exhaust the stack.
 */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'string') {
      if (!noNul(current)) return true;
    } else if (Array.isArray(current)) {
      pending.push(...current);
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (!noNul(key)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}
export const limitSchema = z.coerce.number().int().min(1).max(500).default(50);
export const cursorSchema = z.coerce.number().int().positive().optional();
/**
 * An id in a path (`/admin/events/{id}`): digits only, no sign, no leading zero, at most 15 of
 * them (always a safe integer), so `abc`, `1.5`, `0` and `1e3` are a 400 that says what is expected.
 */
export const eventIdSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,14}$/, { message: 'event id must be a positive whole number' })
  .transform(Number);

/**
 * What a POST that takes no body accepts: nothing, or `{}`. A field sent to such a route is the
 * caller's mistake said out loud (a release sent `{"amount": 5}` would otherwise release the whole
 * hold without a word), as every body schema here is strict: a misspelt field (`expires_at` on a
 * grant, `userid` in a requeue filter, `dryrun` on a reconcile) is a 400 naming it, never ignored
 * into a grant that never expires or a bulk action on every row.
 */
export const noBodySchema = z.strictObject({});

/** One zod issue as the 400's message says it: `path: message`, and an unknown field by name. */
function issueText(issue: z.core.$ZodIssue, noun: string): string {
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  if (issue.code === 'unrecognized_keys') {
    const fields = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    return `${where}unknown ${noun}${issue.keys.length > 1 ? 's' : ''} ${fields}`;
  }
  return `${where}${issue.message}`;
}

/** What an input's unknown keys are called in a 400: a body's fields, a query's parameters. */
type Noun = 'field' | 'parameter';

/** Parses input with a schema, or gives the 400 naming the problems (for a route that returns its answer). */
export function parseOrAnswer<S extends z.ZodType>(
  schema: S,
  input: unknown,
  noun: Noun = 'field',
): { ok: true; value: z.output<S> } | { ok: false; answer: RouteAnswer } {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const message = parsed.error.issues.map((issue) => issueText(issue, noun)).join('; ');
  return { ok: false, answer: errorAnswer(400, 'invalid_request', message) };
}

/** Parses input with a schema or answers 400 naming the problems; returns undefined when it answered. */
export function parseOr400<S extends z.ZodType>(
  res: Response,
  schema: S,
  input: unknown,
  noun: Noun = 'field',
): z.output<S> | undefined {
  const parsed = parseOrAnswer(schema, input, noun);
  if (parsed.ok) return parsed.value;
  sendAnswer(res, parsed.answer);
  return undefined;
}

/** Why support did something (a forgive, a disable): required, kept in the audit row. */
export const supportNoteSchema = z
  .string()
  .min(1)
  .max(1000)
  .refine(noNul, { message: 'must not contain NUL' })
  .describe('why: kept in the audit row');
