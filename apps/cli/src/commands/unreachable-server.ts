import type { DB } from '@tally/billing-core';
import { createDb, type Database, isDatabaseUnavailableError } from '@tally/platform';

export type UnreachableServerCode =
  | 'postgres_unreachable'
  | 'redis_unreachable'
  | 'ingest_unreachable'
  | 'stripe_unreachable';

/**
 * A server the command needs did not answer. The message names the server, its URL (without
 * its password) and the cause, e.g. `cannot reach Postgres at postgres://tally@db:5432/tally:
 * ECONNREFUSED`; `code` is what `--json` prints as `error.code`. Exit code 1, as any failure.
 */
export class ServerUnreachableError extends Error {
  constructor(
    readonly code: UnreachableServerCode,
    server: string,
    url: string,
    cause: string,
    hint?: string,
  ) {
    super(`cannot reach ${server} at ${withoutPassword(url)}: ${cause}${hint ? ` (${hint})` : ''}`);
    this.name = 'ServerUnreachableError';
  }
}

/**
 * The URL as it may be printed: the password (in the authority or a `password`-like query
 * parameter, which libpq accepts) removed; an unparseable URL becomes a placeholder.
 */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '';
    for (const key of [...parsed.searchParams.keys()]) if (/pass/i.test(key)) parsed.searchParams.delete(key);
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an unparseable URL)';
  }
}

/**
 * The short cause of a connection failure: the system error code (ECONNREFUSED, ENOTFOUND, …)
 * from the error, its cause, or the first of an AggregateError (several addresses tried), else
 * the message.
 */
export function describeConnectionFailure(error: unknown): string {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const candidate = queue.shift();
    if (candidate === null || typeof candidate !== 'object' || seen.has(candidate)) continue;
    seen.add(candidate);
    const code = (candidate as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    queue.push((candidate as { cause?: unknown }).cause, (candidate as { detail?: unknown }).detail);
    if (candidate instanceof AggregateError) queue.push(...candidate.errors);
  }
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Runs `work`; a failure that means Postgres cannot be reached becomes a ServerUnreachableError. */
export async function namingPostgres<T>(
  databaseUrl: string,
  work: () => Promise<T>,
  hint = 'check DATABASE_URL',
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isDatabaseUnavailableError(error)) {
      throw new ServerUnreachableError(
        'postgres_unreachable',
        'Postgres',
        databaseUrl,
        describeConnectionFailure(error),
        hint,
      );
    }
    throw error;
  }
}

/** Opens a small pool for one command, runs `work` with it (Postgres failures named), and closes it. */
export async function withDatabase<T>(
  databaseUrl: string,
  work: (db: Database<DB>['db']) => Promise<T>,
  maxConnections = 1,
): Promise<T> {
  const database = createDb<DB>({ connectionString: databaseUrl, maxConnections });
  try {
    return await namingPostgres(databaseUrl, () => work(database.db));
  } finally {
    await database.close();
  }
}
