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
 * The ledger totals of the metrics scrape without a scan of the whole ledger at every scrape
 * (a second or more on ten million entries, every 15 s, on the one writer). The ledger is
 * append-only (a trigger rejects UPDATE, DELETE and TRUNCATE), so the totals of the entries up to
 * some id never change once every entry up to it is committed: those are kept in memory as the
 * settled base, and each read sums only the entries after it (a range of the primary key).
 *
 * Ids are drawn before their transactions commit, so an id below one already seen can still
 * appear. A range is folded into the base only once no transaction that could hold an id in it
 * is still running. An id up to the largest one a read saw (M) that the read did not see was
 * drawn before M was (the identity hands ids out in order, cache 1), so before that read's
 * snapshot, by a transaction that had its transaction id by then (every ledger writer locks the
 * wallet row, which assigns it, before it inserts the entry). So each read also assigns itself a
 * transaction id (`pg_current_xact_id()`, evaluated after the statement's snapshot was taken):
 * ids are assigned in increasing order, so it is above that writer's. A later read whose
 * snapshot's xmin is at least that id folds the entries up to M: xmin <= xmax, so that snapshot's
 * xmax is above every id below it, each of which is therefore either listed in its xip (and then
 * not below xmin) or finished. The snapshot's own xmax would not do as the bound: on Postgres 14+
 * it is the latest *completed* transaction id + 1, so a writer that got its id after the last
 * completion and still runs is at or above it, is not in xip and holds no xmin back (the fold
 * would pass its entry, which would then never be counted). The price is one transaction id and
 * one commit record per read (a scrape every 15 s), and the read needs the primary (a standby
 * cannot assign ids). A long transaction only holds the fold back: the reads sum more entries
 * meanwhile, and stay exact.
 *
 * Every read is one statement: the fold of a range the previous read proved settled comes from
 * the same rows. One reader per process (its base lives in memory); a process's first read and
 * its first fold (normally the next read) each scan the ledger once. The totals match a full
 * GROUP BY of the same moment.
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
      const foldUpTo = checkpoints.filter((checkpoint) => checkpoint.assignedAfter <= lastXmin).at(-1)?.maxId ?? after;
      // One statement: the entries after the base, marked by whether they fold, the snapshot that
      // saw them, and a transaction id assigned after that snapshot.
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
