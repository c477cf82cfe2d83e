const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction: mid-failover, connected to a server that is (now) a standby
]);

/**
 * True when the error means "the database cannot be reached right now" rather than "this
 * statement is wrong": callers answer 503 so the provider retries later.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (unavailableCodes.has(code) || code.startsWith('08'))) return true;
  // pg reports a connection lost mid-query, a client used after its connection broke, a
  // connection timeout and a statement past its query_timeout (create-db.ts) by message only.
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|connection error and is not queryable|Query read timeout|Postgres connection has been discarded/i.test(
    error.message,
  );
}

/** The SQLSTATE of a Postgres error, if it is one. */
export function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
