// The plans of the statements Tally itself runs, with their real parameters: auto_explain (the
// contrib module shipped with Postgres) switched on for one database of the bench's private
// cluster, so that every statement executed there (nested ones too: foreign-key checks, the
// ledger's wallet trigger) is logged as EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) in the cluster's
// log; read back per step of a run and summarized (time, buffers, the scans each plan used).
// The bench's own queries carry `benchQueryMarker` and are left out.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { median, round } from './stats.mjs';
import { pg } from './workspace.mjs';

/** Prefix of the bench's own queries in a database whose plans are logged (they are skipped). */
export const benchQueryMarker = '/* bench */';

const settings = {
  session_preload_libraries: 'auto_explain',
  'auto_explain.log_min_duration': '0',
  'auto_explain.log_analyze': 'on',
  'auto_explain.log_buffers': 'on',
  'auto_explain.log_timing': 'on',
  'auto_explain.log_nested_statements': 'on',
  'auto_explain.log_format': 'json',
};

/** Every session opened on `database` from now on logs its plans (the ones already open do not). */
export async function enableAutoExplain(admin, database) {
  for (const [name, value] of Object.entries(settings)) {
    await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(database)} SET ${name} = '${value}'`);
  }
}

export async function disableAutoExplain(admin, database) {
  await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(database)} RESET ALL`);
}

export function logSize(logFile) {
  return statSync(logFile).size;
}

function readFrom(logFile, offset) {
  const size = statSync(logFile).size;
  const buffer = Buffer.alloc(Math.max(0, size - offset));
  const fd = openSync(logFile, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/**
 * The plans logged since `offset`: [{ durationMs, query, plan }]. A log entry starts with the
 * line prefix (`%m [%p] `) and continues on tab-indented lines; auto_explain's message is
 * `duration: <ms> ms  plan:` followed by the JSON.
 */
export function readPlans(logFile, offset) {
  const plans = [];
  let current = null;
  const flush = () => {
    if (!current) return;
    try {
      const parsed = JSON.parse(current.lines.join('\n'));
      const query = String(parsed['Query Text'] ?? '');
      if (!query.includes(benchQueryMarker)) plans.push({ durationMs: current.durationMs, query, plan: parsed.Plan });
    } catch {
      // a plan cut by the end of the read: left out
    }
    current = null;
  };
  for (const line of readFrom(logFile, offset).split('\n')) {
    if (line.startsWith('\t')) {
      current?.lines.push(line.slice(1));
      continue;
    }
    flush();
    const match = /LOG: {2}duration: ([\d.]+) ms {2}plan:(.*)$/.exec(line);
    if (match) current = { durationMs: Number(match[1]), lines: match[2].trim() ? [match[2]] : [] };
  }
  flush();
  return plans;
}

/** The plan's nodes, depth first. */
function nodes(plan, out = []) {
  if (!plan) return out;
  out.push(plan);
  for (const child of plan.Plans ?? []) nodes(child, out);
  return out;
}

const scanTypes = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Index Scan', 'Bitmap Heap Scan']);

/** `Index Scan on inbox_events using inbox_events_pkey`, `Seq Scan on ledger_entries`, … */
function describeScan(node) {
  const on = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
  const using = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  return `${node['Node Type']}${on}${using}`;
}

export const queryKey = (query) =>
  query
    .replace(/\/\*.*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .trim()
    // A multi-row VALUES list differs per batch size: one key for every size.
    .replace(/VALUES \(.*$/i, 'VALUES (…)')
    .slice(0, 180);

/**
 * Plans grouped by statement: calls, median and max duration, median buffers of the whole plan
 * (shared hit + read, and read alone: pages not in shared buffers), the scans used and the
 * sequential scans with the rows they read (`rows`: returned plus removed by the filter).
 */
export function summarizePlans(plans) {
  const groups = new Map();
  for (const entry of plans) {
    const key = queryKey(entry.query);
    const group = groups.get(key) ?? {
      query: key,
      durations: [],
      blocks: [],
      read: [],
      scans: new Set(),
      seqScans: [],
    };
    group.durations.push(entry.durationMs);
    group.blocks.push((entry.plan?.['Shared Hit Blocks'] ?? 0) + (entry.plan?.['Shared Read Blocks'] ?? 0));
    group.read.push(entry.plan?.['Shared Read Blocks'] ?? 0);
    for (const node of nodes(entry.plan)) {
      if (!scanTypes.has(node['Node Type'])) continue;
      group.scans.add(describeScan(node));
      if (node['Node Type'] === 'Seq Scan') {
        const loops = node['Actual Loops'] ?? 1;
        group.seqScans.push({
          relation: node['Relation Name'],
          rows: round(((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * loops),
        });
      }
    }
    groups.set(key, group);
  }
  return [...groups.values()].map((group) => ({
    query: group.query,
    calls: group.durations.length,
    medianMs: round(median(group.durations), 3),
    maxMs: round(Math.max(...group.durations), 3),
    medianBlocks: median(group.blocks),
    medianBlocksRead: median(group.read),
    scans: [...group.scans].sort(),
    // The largest sequential scan per relation.
    seqScans: Object.values(
      Object.fromEntries(group.seqScans.sort((a, b) => a.rows - b.rows).map((scan) => [scan.relation, scan])),
    ),
  }));
}

/**
 * The same step's statements on two databases side by side (`small`, `big`): the big one's
 * median time over the small one's, and flags for what regresses with the table's size: a
 * sequential scan reading `seqScanRows` rows or more, or a plan touching `manyBlocks` buffers or
 * more and ten times the small one's. Not time: one call's milliseconds on a loaded machine are
 * mostly its wait for a core or a page from the OS cache, a block count is the plan's own.
 */
export function comparePlans(small, big, { seqScanRows = 100_000, manyBlocks = 1_000 } = {}) {
  const byKey = new Map(small.map((entry) => [entry.query, entry]));
  return big.map((entry) => {
    const before = byKey.get(entry.query);
    const ratio = before && before.medianMs > 0 ? round(entry.medianMs / before.medianMs, 2) : null;
    const bigSeqScans = entry.seqScans.filter((scan) => scan.rows >= seqScanRows);
    const flags = [
      ...bigSeqScans.map((scan) => `seq scan of ${scan.rows} rows on ${scan.relation}`),
      ...(entry.medianBlocks >= manyBlocks && entry.medianBlocks >= 10 * (before?.medianBlocks ?? 0)
        ? [`${entry.medianBlocks} blocks (${before?.medianBlocks ?? '-'} on the small one)`]
        : []),
    ];
    return {
      query: entry.query,
      calls: entry.calls,
      smallMs: before?.medianMs ?? null,
      bigMs: entry.medianMs,
      ratio,
      smallBlocks: before?.medianBlocks ?? null,
      bigBlocks: entry.medianBlocks,
      bigBlocksRead: entry.medianBlocksRead,
      scans: entry.scans,
      flags,
    };
  });
}
