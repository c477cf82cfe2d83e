import { type Kysely, sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import { type Clock, systemClock } from '../clock';
import type { DB, InboxEventRow, Provider } from '../db/schema';
import { isRetryable } from '../errors';
import { revenueCatHandler } from '../providers/revenuecat/revenuecat-handler';
import { stripeHandler } from '../providers/stripe/stripe-handler';
import type { HandlerContext, InboxHandler } from './inbox-handler';

export const DEFAULT_MAX_ATTEMPTS = 15;
const MAX_ERROR_LENGTH = 2_000;
// Namespace for per-user advisory locks (pg_advisory_xact_lock(namespace, hashtext(user))).
const USER_LOCK_NAMESPACE = 7_411_001;

export type InboxHandlers = Record<Provider, InboxHandler<unknown>>;

export const defaultInboxHandlers: InboxHandlers = {
  revenuecat: revenueCatHandler as InboxHandler<unknown>,
  stripe: stripeHandler as InboxHandler<unknown>,
};

export interface InboxProcessorDeps {
  db: Kysely<DB>;
  catalog: Catalog;
  clock?: Clock;
  /** Rows are parked (status `failed`) once this many attempts have failed. */
  maxAttempts?: number;
  /** Composition roots may swap handlers (a new provider, a test double of a provider API). */
  handlers?: InboxHandlers;
}

export type ProcessInboxEventResult =
  | { kind: 'processed'; row: InboxEventRow; outcome: string }
  | { kind: 'ignored'; row: InboxEventRow; outcome: string }
  /** Nothing to do: the row is finished or parked, or another run finished it first. */
  | { kind: 'skipped'; status: string }
  | { kind: 'not-found' }
  | {
      kind: 'failed';
      error: unknown;
      attempts: number;
      parked: boolean;
      retryable: boolean;
      provider: Provider;
      type: string;
    };

/**
 * Processes one inbox row. Safe to call any number of times, concurrently, from any replica.
 *
 * Order: claim the row (received → processing), run the handler's provider reads outside any
 * transaction, then in one transaction take the user's advisory lock (events of one user apply
 * one at a time), lock the row, re-check it is still unfinished, apply the effects and mark it
 * processed. Effects and the mark commit together, so a crash before commit leaves the row to be
 * run again and a crash after commit finds it finished. Money effects are additionally fenced by
 * ledger references.
 *
 * A failure is recorded on the row (attempts + 1, truncated last_error); after maxAttempts, or at
 * once for a non-retryable error, the row is parked. Never throws for a handler failure: the
 * result says what happened and the caller decides about retries.
 */
export async function processInboxEvent(
  deps: InboxProcessorDeps,
  inboxEventId: number,
): Promise<ProcessInboxEventResult> {
  const { db } = deps;
  const claimed = await db
    .updateTable('inbox_events')
    .set({ status: 'processing', updated_at: sql`now()` })
    .where('id', '=', inboxEventId)
    .where('status', 'in', ['received', 'processing'])
    .returningAll()
    .executeTakeFirst();
  if (!claimed) {
    const row = await db.selectFrom('inbox_events').select('status').where('id', '=', inboxEventId).executeTakeFirst();
    return row ? { kind: 'skipped', status: row.status } : { kind: 'not-found' };
  }

  const handler = (deps.handlers ?? defaultInboxHandlers)[claimed.provider];
  const ctx: HandlerContext = { catalog: deps.catalog, clock: deps.clock ?? systemClock };
  try {
    const prepared = await handler.prepare(claimed, ctx);
    return await db.transaction().execute(async (trx): Promise<ProcessInboxEventResult> => {
      if (claimed.user_id !== null) {
        await sql`SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(${claimed.user_id}))`.execute(trx);
      }
      const row = await trx
        .selectFrom('inbox_events')
        .selectAll()
        .where('id', '=', inboxEventId)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (row.status !== 'processing' && row.status !== 'received') return { kind: 'skipped', status: row.status };
      const result = await handler.apply(trx, row, prepared, ctx);
      const finished = await trx
        .updateTable('inbox_events')
        .set({
          status: result.kind,
          outcome: result.outcome,
          attempts: sql`attempts + 1`,
          last_error: null,
          processed_at: sql`now()`,
          updated_at: sql`now()`,
        })
        .where('id', '=', inboxEventId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { kind: result.kind, row: finished, outcome: result.outcome };
    });
  } catch (error) {
    return recordInboxFailure(deps, inboxEventId, error);
  }
}

/** Truncated, single-line error text for the row; never includes a stack. */
export function toErrorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

async function recordInboxFailure(
  deps: InboxProcessorDeps,
  inboxEventId: number,
  error: unknown,
): Promise<ProcessInboxEventResult> {
  const retryable = isRetryable(error);
  const maxAttempts = deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const row = await deps.db
    .updateTable('inbox_events')
    .set({
      attempts: sql`attempts + 1`,
      last_error: toErrorText(error),
      status: retryable ? sql`CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'received' END` : 'failed',
      updated_at: sql`now()`,
    })
    .where('id', '=', inboxEventId)
    .where('status', 'in', ['received', 'processing'])
    .returning(['attempts', 'status', 'provider', 'type'])
    .executeTakeFirst();
  if (!row) {
    // A concurrent run finished the row while this one failed: nothing to retry.
    const current = await deps.db
      .selectFrom('inbox_events')
      .select('status')
      .where('id', '=', inboxEventId)
      .executeTakeFirst();
    return current ? { kind: 'skipped', status: current.status } : { kind: 'not-found' };
  }
  return {
    kind: 'failed',
    error,
    attempts: row.attempts,
    parked: row.status === 'failed',
    retryable,
    provider: row.provider,
    type: row.type,
  };
}
