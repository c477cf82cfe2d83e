import { CompiledQuery, type Kysely, type QueryResult, type RawBuilder, type Transaction } from 'kysely';
import { PooledConnection } from './create-db';

/**
 * A statement of the hot path whose SQL text is compiled once, on first use, with a slot in place
 * of every value (Kysely's `sql` compiles the same text anew on every `execute`): each execution
 * fills the parameters from `values` in the slots' order and runs the text, on the open
 * transaction's connection directly (openConnectionOf) or through Kysely's executor.
 * The template must be a pure function of its slots: every `${}` is a slot (`s.userId`, `s[0]`)
 * or a fragment built from slots, never a value that decides the text; any other interpolation is
 * refused at its first compile.
 */
export function precompiledSql<V extends object, R = Record<string, unknown>>(
  template: (slots: { readonly [K in keyof V]: V[K] }) => RawBuilder<unknown>,
): <DB>(db: Kysely<DB> | Transaction<DB>, values: V) => Promise<QueryResult<R>> {
  let compiled: Compiled<V> | undefined;
  return async (db, values) => {
    compiled ??= compileWithSlots(db, template);
    const { slots } = compiled;
    const parameters = new Array<unknown>(slots.length);
    for (let index = 0; index < slots.length; index += 1) {
      // guard: precompiled-slot-order
      parameters[index] = (values as Record<keyof V, unknown>)[slots[index] as keyof V];
    }
    // What CompiledQuery.raw makes, without freezing a new query node and id per execution
    // (the driver reads only sql and parameters; no plugin reads the node or the id).
    const query: CompiledQuery<R> = { sql: compiled.sql, parameters, query: compiled.query, queryId: compiled.queryId };
    if (db.isTransaction) {
      const connection = await openConnectionOf(db as Transaction<unknown>);
      if (connection !== undefined) return connection.executeQuery<R>(query);
    }
    return db.executeQuery<R>(query);
  };
}

/**
 * The connection of an open transaction, so that its precompiled statements skip Kysely's
 * executor layers (half a dozen promises a statement): looked up through Kysely once per
 * transaction, then used only while the connection says that same transaction is still open
 * (PooledConnection's epoch and inTransaction); otherwise undefined and the statement goes
 * through Kysely, which refuses a transaction that has ended. Undefined too for a connection
 * createDb did not make.
 */
const openConnections = new WeakMap<Transaction<unknown>, { connection: PooledConnection; epoch: number }>();

async function openConnectionOf(trx: Transaction<unknown>): Promise<PooledConnection | undefined> {
  const known = openConnections.get(trx);
  if (known !== undefined) {
    const { connection, epoch } = known;
    // guard: precompiled-transaction-epoch
    return connection.inTransaction && connection.epoch === epoch ? connection : undefined;
  }
  const connection = await trx.getExecutor().provideConnection(async (found) => found);
  if (!(connection instanceof PooledConnection) || !connection.inTransaction) return undefined;
  openConnections.set(trx, { connection, epoch: connection.epoch });
  return connection;
}

interface Compiled<V> {
  sql: string;
  slots: (keyof V)[];
  query: CompiledQuery['query'];
  queryId: CompiledQuery['queryId'];
}

const SLOT = Symbol('precompiled slot');
type Slot = { readonly [SLOT]: PropertyKey };

function isSlot(value: unknown): value is Slot {
  return typeof value === 'object' && value !== null && SLOT in value;
}

function compileWithSlots<V extends object, DB>(
  db: Kysely<DB> | Transaction<DB>,
  template: (slots: { readonly [K in keyof V]: V[K] }) => RawBuilder<unknown>,
): Compiled<V> {
  const slots = new Proxy(
    {},
    {
      get: (_target, name) => ({ [SLOT]: name }),
    },
  ) as { readonly [K in keyof V]: V[K] };
  const query = template(slots).compile(db);
  const raw = CompiledQuery.raw(query.sql, []);
  return {
    sql: query.sql,
    query: raw.query,
    queryId: raw.queryId,
    slots: query.parameters.map((parameter, index) => {
      if (!isSlot(parameter)) {
        throw new TypeError(`precompiledSql: parameter $${index + 1} of a precompiled statement is not a slot`);
      }
      return parameter[SLOT] as keyof V;
    }),
  };
}
