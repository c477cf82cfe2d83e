import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Named prepared statements for the statements a process runs again and again (createDb's
 * `preparedStatements`, DATABASE_PREPARED_STATEMENTS). Without a name node-postgres sends the
 * whole SQL text on every execution and Postgres parses and plans it anew each time: on the
 * inbox hot path that planning was about a quarter of Postgres's time per event (bench/README.md,
 * "Where the time went"). With a name, a connection sends the text once (Parse) and afterwards
 * only Bind/Execute, and Postgres reuses the plan (a generic one once it is no worse).
 *
 * Which statements: a text with parameters, once the pool has seen it `PREPARE_AFTER` times;
 * at most `MAX_NAMED` texts per pool and `MAX_PER_CONNECTION` named statements per connection
 * (psycopg's threshold/maximum design), so ad-hoc texts (an `IN (…)` of any length, an admin
 * filter) never pile up on the server. A text's name is a hash of it, so a name always means the
 * same text on any connection.
 *
 * Two recoveries keep it safe:
 * - A migration that changes the row type a prepared statement returns (a column added to a
 *   table read with `*`) makes Postgres refuse it ("cached plan must not change result type",
 *   0A000). That connection then uses a new name for the text (the old statement stays until the
 *   connection closes); a statement outside a transaction is retried at once, one inside fails
 *   its transaction once, as any database error does (the inbox engine retries the attempt).
 * - A transaction pooler that cannot route named statements (PgBouncer before 1.21, or without
 *   `max_prepared_statements`) answers "prepared statement … does not exist" (26000) or "… already
 *   exists" (42P05): the whole pool stops naming statements at once and says so through
 *   `onDisabled`; the statement is retried unnamed when it was outside a transaction.
 *   DATABASE_PREPARED_STATEMENTS=false avoids even that first failure (docs/scaling.md).
 */
export const PREPARE_AFTER = 3;
export const MAX_NAMED = 500;
export const MAX_PER_CONNECTION = 200;
/** Texts seen fewer than PREPARE_AFTER times, counted until this many, then counted afresh. */
const MAX_COUNTED = 5_000;

/** Postgres error codes the recoveries above react to. */
const RESULT_TYPE_CHANGED = '0A000';
const NO_SUCH_STATEMENT = '26000';
const STATEMENT_EXISTS = '42P05';

/** The pool-wide half: which texts are hot, their names, and whether naming is still on. */
export class StatementNames {
  private readonly counts = new Map<string, number>();
  private readonly names = new Map<string, string>();
  private on: boolean;

  constructor(
    enabled: boolean,
    private readonly onDisabled: (error: Error) => void = () => undefined,
  ) {
    this.on = enabled;
  }

  get enabled(): boolean {
    return this.on;
  }

  /** The name to run `text` under, or undefined to run it unnamed. */
  nameOf(text: string): string | undefined {
    if (!this.on) return undefined;
    const known = this.names.get(text);
    if (known !== undefined) return known;
    const seen = (this.counts.get(text) ?? 0) + 1;
    if (seen < PREPARE_AFTER) {
      if (this.counts.size >= MAX_COUNTED) this.counts.clear();
      this.counts.set(text, seen);
      return undefined;
    }
    this.counts.delete(text);
    if (this.names.size >= MAX_NAMED) return undefined;
    const name = `tally_${createHash('sha1').update(text).digest('hex')}`;
    this.names.set(text, name);
    return name;
  }

  /** A transaction pooler is in the way: no statement is named from now on. */
  disable(error: Error): void {
    if (!this.on) return;
    this.on = false;
    this.onDisabled(error);
  }
}

type QueryResult = pg.QueryResult<Record<string, unknown>>;
/** The parts of node-postgres's connection a named statement's bookkeeping lives in. */
interface ConnectionState {
  parsedStatements: Record<string, string>;
}

const codeOf = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;

/**
 * The pg.Client the pool opens (pg.Pool's `Client` option): `query(text, values)`, the only form
 * Kysely uses, runs as a named statement when `names` says so; every other form is unchanged.
 */
export function namingClient(names: StatementNames): typeof pg.Client {
  return class NamingClient extends pg.Client {
    /** A text's name here, when a migration changed its result type (see above). */
    private readonly renamed = new Map<string, string>();
    private named = 0;

    // One signature for all of pg.Client's overloads: only (string, non-empty array) is changed.
    override query(...args: unknown[]): never {
      const [text, values, callback] = args;
      if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined) {
        return (super.query as (...rest: unknown[]) => never)(...args);
      }
      return this.runNamed(text, values) as never;
    }

    private get parsed(): Record<string, string> {
      return (this as unknown as { connection: ConnectionState }).connection.parsedStatements;
    }

    private async runNamed(text: string, values: unknown[], retried = false): Promise<QueryResult> {
      const unnamed = () => super.query(text, values) as Promise<QueryResult>;
      const base = names.nameOf(text);
      if (base === undefined) return unnamed();
      const name = this.renamed.get(base) ?? base;
      if (this.parsed[name] === undefined) {
        if (this.named >= MAX_PER_CONNECTION) return unnamed();
        this.named += 1;
      }
      // Outside a transaction a failed Parse or Bind ran nothing, so the statement may run again.
      const outsideTransaction = this.getTransactionStatus() === 'I';
      try {
        return await this.submitNamed(name, text, values);
      } catch (error) {
        const code = codeOf(error);
        if (code === RESULT_TYPE_CHANGED && /cached plan must not change result type/.test(String(error))) {
          this.renamed.set(base, `${base}_${this.named}`);
          if (outsideTransaction && !retried) return this.runNamed(text, values, true);
        } else if (code === NO_SUCH_STATEMENT || code === STATEMENT_EXISTS) {
          names.disable(error as Error);
          if (outsideTransaction) return unnamed();
        }
        throw error;
      }
    }

    /**
     * `query({ name, text, values })` would do, but node-postgres copies a config object through
     * property descriptors (about 10 µs a statement); a Query made from the text, then named, is
     * what that copy would build.
     */
    private submitNamed(name: string, text: string, values: unknown[]): Promise<QueryResult> {
      return new Promise((resolve, reject) => {
        const query = new pg.Query(text, values) as pg.Query & {
          name: string;
          callback: (error: Error | null, result: QueryResult) => void;
        };
        query.name = name;
        query.callback = (error, result) => (error ? reject(error) : resolve(result));
        super.query(query);
      });
    }
  };
}
