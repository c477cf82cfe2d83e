import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from './schema';

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Parses int8 into a JS number, refusing values a double cannot hold exactly. Token amounts and
 * ids stay far below 2^53; if one ever does not, failing loudly beats rounding money.
 */
function parseSafeInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) {
    throw new RangeError(`integer ${value} is outside the safe range of a JS number`);
  }
  return parsed;
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return parseSafeInteger;
    return pg.types.getTypeParser(oid, format);
  },
};

export interface CreateDbOptions {
  connectionString: string;
  /** Pool size; the default suits one process with moderate concurrency. */
  maxConnections?: number;
  /** How long a request waits for a free or new connection before failing. */
  connectionTimeoutMs?: number;
  applicationName?: string;
}

export interface Database {
  db: Kysely<DB>;
  pool: pg.Pool;
  /** Ends the pool; safe to call twice. */
  close(): Promise<void>;
}

/** Opens a pool and a Kysely instance over it. int8 columns come back as numbers. */
export function createDb(options: CreateDbOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    application_name: options.applicationName ?? 'tally',
    types,
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the next query gets a fresh connection.
  pool.on('error', () => undefined);
  // A client whose connection dies while checked out (pg_terminate_backend, a failover) emits
  // 'error' with no pool listener attached: without this, that would crash the process. Its
  // query has already failed, and the pool drops the dead client when it is released.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  let closed: Promise<void> | undefined;
  return {
    db,
    pool,
    close() {
      closed ??= db.destroy();
      return closed;
    },
  };
}
