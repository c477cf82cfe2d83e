import type { Transaction } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { Clock } from '../clock';
import type { DB, InboxEventRow } from '../db/schema';

/** What applying one event did; recorded on the row as its outcome. */
export type HandlerResult = { kind: 'processed'; outcome: string } | { kind: 'ignored'; outcome: string };

export interface HandlerContext {
  catalog: Catalog;
  clock: Clock;
}

/**
 * A provider's event handler, split in two so that provider reads never run inside a
 * transaction: `prepare` may call external APIs (outside any transaction) and returns what
 * `apply` needs; `apply` writes every effect inside the transaction that also marks the row
 * processed. Both must be safe to run again for the same row.
 */
export interface InboxHandler<Prepared = unknown> {
  prepare(row: InboxEventRow, ctx: HandlerContext): Promise<Prepared>;
  apply(trx: Transaction<DB>, row: InboxEventRow, prepared: Prepared, ctx: HandlerContext): Promise<HandlerResult>;
}
