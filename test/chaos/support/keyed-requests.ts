import type { DB } from '@tally/billing-core';
import { type Kysely, sql } from 'kysely';
import type { FakeStripe } from '../../support/fakes/fake-stripe';

/** A broken guarantee (the shape of invariants.ts's Violation; not imported: chaos-cluster imports this file). */
interface Violation {
  invariant: string;
  detail: string;
}

/** One answer to a POST (status 0: none arrived: the api died, or the request timed out). */
export interface PostAnswer {
  status: number;
  body: string;
  replayed: boolean;
}

/** One user action: a keyed POST with every answer its attempts got, or one unkeyed POST. */
export interface LoggedAction {
  /** The user the path names. */
  user: string;
  path: string;
  /** What the action creates, when it creates something: a top-up or a studio request. */
  creates: 'topup' | 'studio' | undefined;
  /** The Idempotency-Key (undefined: sent without one, so each POST is an action of its own). */
  key: string | undefined;
  /** The studio request's prompt (unique per action in the chaos suite), when it has one. */
  prompt: string | undefined;
  answers: PostAnswer[];
}

function createsOf(path: string): LoggedAction['creates'] {
  if (/^\/v1\/users\/[^/]+\/topups$/.test(path)) return 'topup';
  if (/^\/v1\/users\/[^/]+\/studio\/requests$/.test(path)) return 'studio';
  return undefined;
}

/**
 * Every POST under /v1 any scenario sent through `ChaosCluster.apiRequest`, grouped by
 * (user, Idempotency-Key), with every answer. `checkIdempotencyKeys` judges the api by it after
 * every scenario: behaviour only (answers, the rows created, the PaymentIntents Stripe was asked
 * for), never how the api keeps its keys.
 */
export class KeyedRequestLog {
  readonly actions: LoggedAction[] = [];
  private readonly byKey = new Map<string, LoggedAction>();

  /** Records the answer to `sent` (read from a clone) and hands the response on. */
  async record(path: string, body: unknown, key: string | undefined, sent: Promise<Response>): Promise<Response> {
    const user = decodeURIComponent(/^\/v1\/users\/([^/]+)/.exec(path)?.[1] ?? '');
    const id = key === undefined ? undefined : `${user}\u0000${key}`;
    let action = id === undefined ? undefined : this.byKey.get(id);
    if (!action) {
      const prompt = (body as { input?: { prompt?: unknown } } | undefined)?.input?.prompt;
      action = {
        user,
        path,
        creates: createsOf(path),
        key,
        prompt: typeof prompt === 'string' ? prompt : undefined,
        answers: [],
      };
      this.actions.push(action);
      if (id !== undefined) this.byKey.set(id, action);
    }
    try {
      const response = await sent;
      const text = await response
        .clone()
        .text()
        .catch(() => '');
      action.answers.push({
        status: response.status,
        body: text,
        replayed: response.headers.get('idempotent-replayed') === 'true',
      });
      return response;
    } catch (error) {
      action.answers.push({ status: 0, body: '', replayed: false });
      throw error;
    }
  }
}

/** An answer the app takes as final: below 500, not 409 (in use: retry later), and not "no answer". */
export const isFinal = (answer: PostAnswer) => answer.status !== 0 && answer.status < 500 && answer.status !== 409;

/**
 * Every Idempotency-Key produced at most one effect, and one answer:
 * - every final answer of a key has the same status and body, byte for byte, and each after the
 *   first is marked `Idempotent-Replayed: true`;
 * - a 201/202 names a row of its user (a top-up reference, a studio request id), and two keys never
 *   name the same row;
 * - per user (and per prompt, for studio requests), no more rows than actions (a keyed action
 *   counts once however often it was retried, an unkeyed POST once);
 * - at most one PaymentIntent at Stripe per top-up.
 */
export async function checkIdempotencyKeys(
  db: Kysely<DB>,
  log: KeyedRequestLog,
  stripe: FakeStripe,
): Promise<{ violations: Violation[]; keys: number; retried: number }> {
  const violations: Violation[] = [];
  const fail = (detail: string) => violations.push({ invariant: 'one Idempotency-Key, at most one effect', detail });
  const keyed = log.actions.filter((action) => action.key !== undefined);
  const named = new Map<string, string>();
  for (const action of keyed) {
    const finals = action.answers.filter(isFinal);
    const [first, ...later] = finals;
    if (!first) continue;
    for (const answer of later) {
      if (answer.status !== first.status || answer.body !== first.body) {
        fail(
          `${action.user} ${action.key}: answered ${first.status} ${first.body.slice(0, 100)}, then ${answer.status} ${answer.body.slice(0, 100)}`,
        );
      } else if (!answer.replayed) {
        fail(`${action.user} ${action.key}: a retry after the answer was not marked replayed`);
      }
    }
    if (action.creates && (first.status === 201 || first.status === 202)) {
      const parsed = JSON.parse(first.body || '{}') as { reference?: string; id?: string };
      const row = `${action.creates}:${action.creates === 'topup' ? parsed.reference : parsed.id}`;
      const other = named.get(row);
      if (other) fail(`${action.user} ${action.key} and ${other} both answered with ${row}`);
      named.set(row, `${action.user} ${action.key}`);
    }
  }

  const creating = log.actions.filter((action) => action.creates);
  const users = [...new Set(creating.map((action) => action.user))];
  if (users.length > 0) {
    const { rows } = await sql<{ kind: 'topup' | 'studio'; user_id: string; id: string; prompt: string | null }>`
      SELECT 'topup' AS kind, user_id, reference AS id, NULL AS prompt FROM topups WHERE user_id = ANY(${users}::text[])
      UNION ALL
      SELECT 'studio', user_id, public_id::text, input::jsonb ->> 'prompt' FROM studio_requests
       WHERE user_id = ANY(${users}::text[])`.execute(db);
    const existing = new Map(rows.map((row) => [`${row.kind}:${row.id}`, row.user_id]));
    for (const [row, by] of named) {
      const user = by.split(' ')[0];
      if (existing.get(row) !== user) fail(`${by} answered with ${row}, which is no row of ${user}`);
    }
    // Rows per (kind, user[, prompt]) against the actions that could have made them.
    const group = (kind: string, user: string, prompt: string | null | undefined) =>
      kind === 'studio' && prompt ? `${kind} ${user} prompt ${prompt}` : `${kind} ${user}`;
    const actions = new Map<string, number>();
    const made = new Map<string, number>();
    for (const action of creating) {
      const key = group(action.creates as string, action.user, action.prompt);
      actions.set(key, (actions.get(key) ?? 0) + 1);
    }
    const promptsSent = new Set(creating.map((action) => group(action.creates as string, action.user, action.prompt)));
    for (const row of rows) {
      // A studio row whose prompt no logged action carried is counted against its user.
      const byPrompt = group(row.kind, row.user_id, row.prompt);
      const key = promptsSent.has(byPrompt) ? byPrompt : group(row.kind, row.user_id, null);
      made.set(key, (made.get(key) ?? 0) + 1);
    }
    for (const [key, count] of made) {
      const allowed = actions.get(key) ?? 0;
      if (count > allowed) fail(`${key}: ${count} rows from ${allowed} actions`);
    }
    const references = new Set(rows.filter((row) => row.kind === 'topup').map((row) => row.id));
    const intents = new Map<string, number>();
    for (const intent of stripe.paymentIntents.values()) {
      const reference = (intent.metadata as Record<string, string> | undefined)?.topup_reference;
      if (reference && references.has(reference)) intents.set(reference, (intents.get(reference) ?? 0) + 1);
    }
    for (const [reference, count] of intents) if (count > 1) fail(`top-up ${reference}: ${count} PaymentIntents`);
  }
  return {
    violations,
    keys: keyed.length,
    retried: keyed.filter((action) => action.answers.length > 1).length,
  };
}
