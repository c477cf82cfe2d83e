import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  PostgresDriver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { namingClient, StatementNames } from './prepared-statements';

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const DATE_OID = 1082;

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
    // A calendar day has no time zone: keep 'YYYY-MM-DD' instead of a local-midnight Date.
    if (oid === DATE_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format);
  },
};

export interface CreateDbOptions {
  connectionString: string;
  /** Pool size; the default suits one process with moderate concurrency. */
  maxConnections?: number;
  /**
   * Connections kept open however long they sit idle (those above it close after
   * idleTimeoutMs). Opened on demand, never closed for idleness once open: a burst after a quiet
   * spell (providers retrying after an outage) then does not wait for new backends to start.
   */
  minConnections?: number;
  /** An idle connection above minConnections is closed after this long. Default 10 s. */
  idleTimeoutMs?: number;
  /** How long a request waits for a free or new connection before failing. */
  connectionTimeoutMs?: number;
  /**
   * How long a statement waits for its answer before it fails (pg's client-side `query_timeout`)
   * and its connection is destroyed, as lost: the caller sees a database-unavailable error
   * (isDatabaseUnavailableError). What it guards against is a silent network path (a partition,
   * a dead host): the connection neither answers nor closes, and TCP alone would wait for its
   * retransmissions to give up, about 15 minutes on Linux. DATABASE_QUERY_TIMEOUT_MS; default
   * 30 s, above any statement Tally runs (lock waits included); 0 turns it off.
   */
  queryTimeoutMs?: number;
  applicationName?: string;
  /**
   * Told about every lost connection (a restart, a failover, a network cut), for logs. The
   * query that was using it fails on its own; nothing else needs to react.
   */
  onConnectionError?: (error: Error) => void;
  /**
   * Postgres ends a session left idle inside a transaction this long (rolling it back, freeing
   * its locks). No Tally transaction waits on anything but its own statements (no external call
   * inside one), so only a frozen process (paused VM, stopped container, stuck host) trips it,
   * and then the user's advisory lock and row locks it held are released for the takeover
   * instead of stalling that user's events indefinitely. Default 60 s; 0 turns it off.
   * Set per transaction (`SET LOCAL` in the BEGIN's own message, see beginSql), never on the
   * session: PgBouncer in transaction mode refuses startup options and shares server sessions.
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * Run the statements the pool keeps running as named prepared statements (parsed and planned
   * once per connection; prepared-statements.ts says which and how it recovers). Only for a
   * direct connection or a pooler that routes them (PgBouncer 1.21+ with
   * `max_prepared_statements`): PgBouncer 1.18 in transaction mode does not, and the pool then
   * turns them off after the first failure. DATABASE_PREPARED_STATEMENTS; off when not given.
   */
  preparedStatements?: boolean;
  /** Told once when the pool turned prepared statements off because a pooler cannot route them. */
  onPreparedStatementsDisabled?: (error: Error) => void;
}

export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/**
 * TCP keepalive on every connection, first probe after this long idle: a pooled connection whose
 * peer vanished (a partition, a dead pooler) is found out while it sits idle, instead of by the
 * next statement that uses it.
 */
export const DATABASE_KEEPALIVE_IDLE_MS = 10_000;
/** pg's error for a statement past its query_timeout (isDatabaseUnavailableError knows it). */
export const QUERY_READ_TIMEOUT_MESSAGE = 'Query read timeout';

/** A pool and its Kysely instance, typed by the application's schema `DB`. */
export interface Database<DB> {
  db: Kysely<DB>;
  pool: pg.Pool;
  /** Whether statements are still being prepared (false when off, or turned off by a pooler). */
  preparedStatements(): boolean;
  /** Ends the pool; safe to call twice. */
  close(): Promise<void>;
}

/**
 * The text that opens every transaction: BEGIN and, in the same simple-protocol message (one
 * round trip, no parameters, nothing prepared), `SET LOCAL idle_in_transaction_session_timeout`.
 * A LOCAL setting ends with its transaction, so it never outlives it on a server connection that
 * a pooler hands to another client next. (A setting on the database or role by a migration would
 * cost nothing per transaction, but CREATE DATABASE … TEMPLATE does not copy it, it needs the
 * database's owner, it would reach operators' psql sessions too, and it is one value for all.)
 */
export function beginSql(idleInTransactionTimeoutMs: number): string {
  if (!Number.isSafeInteger(idleInTransactionTimeoutMs) || idleInTransactionTimeoutMs < 0) {
    throw new RangeError(
      `idleInTransactionTimeoutMs must be a non-negative integer, got ${idleInTransactionTimeoutMs}`,
    );
  }
  // guard: idle-in-transaction-timeout
  return idleInTransactionTimeoutMs === 0
    ? 'begin'
    : `begin; set local idle_in_transaction_session_timeout = ${idleInTransactionTimeoutMs}`;
}

/**
 * One pooled client as Kysely's connection: what Kysely's own PostgresConnection does, with the
 * client reachable, so that a precompiled statement (precompiled-sql.ts) of an open transaction
 * can run on it without Kysely's executor layers. `epoch` counts the transactions begun on it and
 * `inTransaction` says whether one is open: a transaction's cached connection is used only while
 * both still say it is that transaction's (after its commit or rollback the statement goes through
 * Kysely, which refuses it).
 */
export class PooledConnection implements DatabaseConnection {
  discarded = false;
  epoch = 0;
  inTransaction = false;

  constructor(readonly client: pg.PoolClient) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.discarded) throw new Error('Postgres connection has been discarded');
    let result: pg.QueryResult | pg.QueryResult[];
    try {
      result = await this.client.query(compiledQuery.sql, [...compiledQuery.parameters]);
    } catch (error) {
      if (error instanceof Error && error.message === QUERY_READ_TIMEOUT_MESSAGE) {
        // The statement may still be on its way or running: this connection's protocol state is
        // unknown, so it is never used again. Destroying its socket fails whatever else waits on
        // it; the release that follows drops it from the pool.
        // guard: query-timeout-discard
        this.discarded = true;
        (this.client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      }
      throw error;
    }
    // A multi-statement text (beginSql's) answers an array of results: no rows, as in Kysely.
    const { command, rowCount, rows } = result as Partial<pg.QueryResult>;
    if (command === 'ROLLBACK' || command === 'COMMIT') return { rows: [{ command }] as R[] };
    return {
      numAffectedRows:
        command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE'
          ? BigInt(rowCount ?? 0)
          : undefined,
      rows: (rows ?? []) as R[],
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is refused, as Kysely does without a cursor
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming needs a cursor, which this pool is not configured with');
  }
}

/**
 * Kysely's Postgres driver whose transactions open with beginSql, over PooledConnection (what
 * PostgresDriver's connections do, with the client reachable and the transaction tracked).
 */
class SessionFreeDriver extends PostgresDriver {
  private readonly connections = new WeakMap<pg.PoolClient, PooledConnection>();
  private destroyed = false;

  constructor(
    config: PostgresDialectConfig & { pool: pg.Pool },
    private readonly begin: string,
  ) {
    super(config);
    this.pool = config.pool;
  }

  private readonly pool: pg.Pool;

  override async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    if (this.destroyed) {
      client.release();
      throw new Error('driver has already been destroyed');
    }
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PooledConnection(client);
      this.connections.set(client, connection);
    }
    return connection;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel || settings.accessMode) {
      await super.beginTransaction(connection, settings);
      if (this.begin !== 'begin') {
        await connection.executeQuery(CompiledQuery.raw(this.begin.replace(/^begin; /, '')));
      }
    } else {
      await connection.executeQuery(CompiledQuery.raw(this.begin));
    }
    const pooled = connection as PooledConnection;
    pooled.epoch += 1;
    pooled.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as PooledConnection).inTransaction = false;
    await super.commitTransaction(connection);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pooled = connection as PooledConnection;
    pooled.inTransaction = false;
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } catch (error) {
      pooled.discarded = true;
      throw error;
    }
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const pooled = connection as PooledConnection;
    pooled.inTransaction = false;
    pooled.client.release(pooled.discarded);
  }

  override async destroy(): Promise<void> {
    this.destroyed = true;
    await super.destroy();
  }
}

class SessionFreeDialect extends PostgresDialect {
  constructor(
    private readonly config: PostgresDialectConfig & { pool: pg.Pool },
    private readonly begin: string,
  ) {
    super(config);
  }

  override createDriver(): PostgresDriver {
    return new SessionFreeDriver(this.config, this.begin);
  }
}

/**
 * Opens a pool and a Kysely instance over it. int8 columns come back as numbers. Connections lost
 * while the database restarts never crash the process: queries fail (see
 * isDatabaseUnavailableError) until the database is back, then new connections are opened.
 * Keeps no state on a session (no startup options, no session-level SET) and, unless
 * `preparedStatements` is on, no named prepared statement, so `connectionString` may point at
 * PgBouncer in transaction mode.
 */
export function createDb<DB>(options: CreateDbOptions): Database<DB> {
  const names = new StatementNames(options.preparedStatements ?? false, options.onPreparedStatementsDisabled);
  const pool = new pg.Pool({
    Client: names.enabled ? namingClient(names) : pg.Client,
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    min: options.minConnections ?? 0,
    idleTimeoutMillis: options.idleTimeoutMs ?? 10_000,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    query_timeout: (options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS) || undefined,
    keepAlive: true,
    keepAliveInitialDelayMillis: DATABASE_KEEPALIVE_IDLE_MS,
    application_name: options.applicationName ?? 'tally',
    types,
  });
  // A lost connection (restart, failover, network cut) must never crash the process: pg emits
  // 'error' on a client and throws when nobody listens. pg-pool listens only while a client is
  // idle and re-emits it on the pool (handled here); a checked-out client (in a query, in a
  // transaction, holding a lock) emits on itself, so every new client gets a listener too. The
  // caller's query fails with the same error, and the pool drops the broken client on release.
  const report = options.onConnectionError ?? (() => undefined);
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', report);
  });
  const begin = beginSql(options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS);
  const db = new Kysely<DB>({ dialect: new SessionFreeDialect({ pool }, begin) });
  let closed: Promise<void> | undefined;
  return {
    db,
    pool,
    preparedStatements: () => names.enabled,
    close() {
      closed ??= db.destroy();
      return closed;
    },
  };
}
