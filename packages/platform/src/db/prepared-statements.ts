import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Named prepared statements for the statements a process runs again and again (createDb's
 * `preparedStatements`, DATABASE_PREPARED_STATEMENTS; docs/scaling.md#prepared-statements): a
 * text with parameters is named, by a hash of it, once the pool has seen it `PREPARE_AFTER` times,
 * at most `MAX_NAMED` texts per pool and `MAX_PER_CONNECTION` per connection. A result type
 * changed by a migration (0A000) makes that connection rename the text; a pooler that cannot route
 * named statements (26000, 42P05) turns naming off for the whole pool (`onDisabled`). Either way a
 * statement outside a transaction is retried at once, one inside fails its transaction once.
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
