import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';

/** Every ledger entry ever, by direction and reason: entries and tokens (absolute). */
export interface LedgerTotal {
  direction: 'credit' | 'debit';
  reason: string;
  entries: number;
  tokens: number;
}

export interface LedgerTotalsReader {
  /** The totals of every committed ledger entry, as a GROUP BY over the whole ledger would give them. */
  read(db: Kysely<DB>): Promise<LedgerTotal[]>;
  /** Entries with an id at most this are in the settled base (0 before the first fold). */
  readonly settledThrough: number;
  /** Entries the last read summed beyond the base, after its fold (the whole ledger on a process's first read). */
  readonly lastLiveEntries: number;
}

interface Checkpoint {
  /** The largest id the read saw. */
  maxId: number;
  /**
   * The transaction id the read assigned itself after taking its snapshot: above every
   * transaction id assigned before that snapshot, so above every writer's that could hold an id up
   * to maxId the read did not see.
   */
  assignedAfter: bigint;
}

type GroupRow = {
  direction: 'credit' | 'debit';
  reason: string;
  folds: boolean;
  entries: number;
  tokens: number;
  max_id: number;
};

/** Checkpoints kept while a long transaction holds the fold back (older ones are superseded). */
const MAX_CHECKPOINTS = 64;

/**
 * The ledger totals of the metrics scrape without a scan of the whole ledger: the append-only
 * ledger's totals up to a settled id are kept in memory and each read (one statement) sums only
 * the entries after it. A range is folded into that base only once a later snapshot's xmin reaches
 * the transaction id the read that saw it assigned itself (`pg_current_xact_id()`), so no writer
 * that could still commit an id in it is running; why not the snapshot's xmax, and what it costs:
 * docs/operations.md (ledger totals). One reader per process; the totals match a full GROUP BY.
 */
export function createLedgerTotalsReader(): LedgerTotalsReader {
  const base = new Map<string, LedgerTotal>();
  let settledThrough = 0;
  let lastLiveEntries = 0;
  let checkpoints: Checkpoint[] = [];
  /** The last read's snapshot xmin (0 before the first read): what it proved settled stays so. */
  let lastXmin = 0n;

  const keyOf = (row: { direction: string; reason: string }) => `${row.direction}\u0000${row.reason}`;
  const addInto = (into: Map<string, LedgerTotal>, row: GroupRow) => {
    const key = keyOf(row);
    const total = into.get(key) ?? { direction: row.direction, reason: row.reason, entries: 0, tokens: 0 };
    total.entries += Number(row.entries);
    total.tokens += Number(row.tokens);
    into.set(key, total);
  };

  return {
    get settledThrough() {
      return settledThrough;
    },
    get lastLiveEntries() {
      return lastLiveEntries;
    },
    async read(db) {
      const after = settledThrough;
      // The newest range the last read found settled (its xmin at least the id the range's read
      // assigned itself): every transaction that could hold an id in it had finished before that
      // read, so this read sees the range whole and folds it from its own rows.
      // guard: ledger-totals-wait-checkpoints
      const foldUpTo = checkpoints.filter((checkpoint) => checkpoint.assignedAfter <= lastXmin).at(-1)?.maxId ?? after;
      // One statement: the entries after the base, marked by whether they fold, the snapshot that
      // saw them, and a transaction id assigned after that snapshot.
      // guard: ledger-totals-assigned-id
      const { rows } = await sql<{ live: GroupRow[] | null; xmin: string; assigned: string }>`
        WITH live AS (
          SELECT CASE WHEN amount > 0 THEN 'credit' ELSE 'debit' END AS direction, reason,
                 id <= ${foldUpTo} AS folds, count(*) AS entries, sum(abs(amount)) AS tokens,
                 max(id) AS max_id
            FROM ledger_entries
           WHERE id > ${after}
           GROUP BY 1, 2, 3)
        SELECT (SELECT json_agg(live) FROM live) AS live,
               pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
               pg_current_xact_id()::text AS assigned`.execute(db);
      const snapshot = rows[0];
      if (!snapshot) throw new Error('ledger totals: the snapshot read returned no row');
      const totals = new Map<string, LedgerTotal>();
      for (const total of base.values()) totals.set(keyOf(total), { ...total });
      let maxId = after;
      lastLiveEntries = 0;
      for (const row of snapshot.live ?? []) {
        addInto(totals, row);
        if (row.folds) addInto(base, row);
        else lastLiveEntries += Number(row.entries);
        maxId = Math.max(maxId, Number(row.max_id));
      }
      settledThrough = foldUpTo;
      lastXmin = BigInt(snapshot.xmin);
      checkpoints = checkpoints.filter((checkpoint) => checkpoint.maxId > settledThrough);
      if (maxId > settledThrough) {
        checkpoints.push({ maxId, assignedAfter: BigInt(snapshot.assigned) });
        if (checkpoints.length > MAX_CHECKPOINTS) checkpoints = checkpoints.slice(-MAX_CHECKPOINTS);
      }
      return [...totals.values()];
    },
  };
}
