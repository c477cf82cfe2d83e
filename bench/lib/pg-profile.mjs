// Where a drain's Postgres time goes, in measures that survive a loaded machine: CPU seconds of
// the bench's private cluster (every process of it, exited backends included), WAL bytes (the
// cluster's LSN), heap updates and how many were HOT (pg_stat_user_tables), and per statement
// calls, execution time, blocks dirtied and WAL bytes (pg_stat_statements). On the shared server
// (BENCH_POSTGRES=server) only the CPU of the run's live backends is known.
import { cpuSeconds } from './processes.mjs';
import { round } from './stats.mjs';

async function tableStats(pool) {
  await pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await pool.query(
    `SELECT relname, n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot,
            (autovacuum_count + autoanalyze_count)::int AS auto FROM pg_stat_user_tables`,
  );
  return Object.fromEntries(rows.map((row) => [row.relname, row]));
}

/** The state before a run (`postgres`: the private cluster, or null on the shared server). */
export async function profileStart(postgres, pool) {
  if (!postgres) return { postgres };
  await pool.query('SELECT pg_stat_statements_reset()');
  const lsn = (await pool.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  return { postgres, cpu: postgres.cpuSeconds(), lsn, tables: await tableStats(pool) };
}

/** Backend CPU on the shared server: read while the run's connections still live. */
export async function liveBackendCpuSeconds(pool) {
  const { rows } = await pool.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return rows.reduce((sum, row) => sum + (cpuSeconds(row.pid) || 0), 0);
}

/**
 * Per-event figures since `start`. Call after the run's clients stopped (their statistics are
 * flushed when they disconnect). `table`: the inbox table whose updates are reported.
 * `awaitDisconnect: false`, for a client that keeps its connections open (the api): read at once
 * (the cluster's CPU counts live backends too).
 */
export async function profileEnd(start, pool, events, table, { awaitDisconnect = true } = {}) {
  if (!start.postgres) return {};
  // A client's backends exit after it did: wait until they are gone (and reaped, so their CPU is
  // in the postmaster's children's time) before reading the cluster's CPU.
  for (let i = 0; awaitDisconnect && i < 50; i += 1) {
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    );
    if (rows[0].n <= 1) break; // the bench pool's other connection, at most
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (awaitDisconnect) await new Promise((resolve) => setTimeout(resolve, 200));
  const cpu = start.postgres.cpuSeconds() - start.cpu;
  const wal = Number(
    (await pool.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes', [start.lsn])).rows[0]
      .bytes,
  );
  const tables = await tableStats(pool);
  const delta = (name, key) => (tables[name]?.[key] ?? 0) - (start.tables[name]?.[key] ?? 0);
  const perEvent = (value, digits = 3) => round(value / events, digits);
  const { rows } = await pool.query(
    `SELECT query, toplevel, calls::float8, total_exec_time::float8 AS ms, total_plan_time::float8 AS plan_ms, rows::float8,
            shared_blks_hit::float8 AS hit, shared_blks_dirtied::float8 AS dirtied, wal_bytes::float8 AS wal, wal_records::float8 AS wal_records
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC`,
  );
  // Statements run for most events, and any other that takes a visible share of the time: one
  // run once per batch (the batch's read and mark) falls under the first cut, and a slow plan
  // there would otherwise stay out of the profile.
  const totalMs = rows.reduce((sum, row) => sum + row.ms, 0);
  const statements = rows
    .filter((row) => row.calls >= events / 10 || row.ms >= totalMs * 0.02)
    .slice(0, 20)
    .map((row) => ({
      query: row.query.replace(/\s+/g, ' ').slice(0, 160),
      // false: run inside another statement (a trigger's, a function's: track = all), no round trip of its own.
      topLevel: row.toplevel,
      callsPerEvent: perEvent(row.calls, 2),
      execUsPerEvent: perEvent(row.ms * 1000, 1),
      planUsPerEvent: perEvent(row.plan_ms * 1000, 1),
      blocksDirtiedPerEvent: perEvent(row.dirtied, 2),
      walBytesPerEvent: perEvent(row.wal, 0),
    }));
  const statementCalls = rows.reduce((sum, row) => sum + row.calls, 0);
  const topLevel = rows.filter((row) => row.toplevel);
  const topLevelCalls = topLevel.reduce((sum, row) => sum + row.calls, 0);
  const topLevelMs = topLevel.reduce((sum, row) => sum + row.ms, 0);
  return {
    clusterCpuMsPerEvent: perEvent(cpu * 1000),
    walBytesPerEvent: perEvent(wal, 0),
    statementsPerEvent: perEvent(statementCalls, 2),
    // The client's own statements (BEGIN and COMMIT included; a multi-statement query counts each).
    topLevelStatementsPerEvent: perEvent(topLevelCalls, 2),
    // Their execution time (a nested statement's is inside its caller's): Postgres's busy time per event.
    topLevelExecMsPerEvent: perEvent(topLevelMs, 3),
    inboxUpdatesPerEvent: perEvent(delta(table, 'upd'), 2),
    inboxHotUpdatesPerEvent: perEvent(delta(table, 'hot'), 2),
    // Autovacuum and autoanalyze runs during the run, over every table (their CPU is in the cluster's).
    autovacuumRuns: Object.keys(tables).reduce((sum, name) => sum + delta(name, 'auto'), 0),
    statements,
  };
}

/**
 * Samples, every `intervalMs`, how many of the database's connections are inside a transaction
 * or a statement (`active`, `idle in transaction`), the bench's sampling connection left out:
 * what a transaction pooler would have to lend at that moment. `stop()` answers the mean, the
 * peak and the sample count.
 */
export function sampleBusyConnections(pool, intervalMs = 250) {
  const samples = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const { rows } = await pool.query(
          `SELECT count(*)::int AS busy FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
              AND state IN ('active', 'idle in transaction')`,
        );
        samples.push(rows[0].busy);
      } catch {
        // a sample lost: the others still count
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const mean = samples.length > 0 ? samples.reduce((sum, value) => sum + value, 0) / samples.length : Number.NaN;
      return {
        mean: round(mean, 2),
        peak: samples.length > 0 ? Math.max(...samples) : Number.NaN,
        samples: samples.length,
      };
    },
  };
}
