// `node bench/big-inbox.mjs` (after `tsc -b`): Tally's ingest and drain on empty tables and on a
// big history (bench/prefill-history.mjs: 10 million processed inbox rows and 10 million ledger
// rows by default), one after the other in the same run, on private resources removed at the end.
// Each side: BIG_INBOX_EVENTS (5000) signed Stripe pack purchases stored through Tally's ingest
// (closed loop, BENCH_CONNECTIONS), then drained by one worker; the figures are ingest req/s and
// drain events/s (first to last processed_at of the new rows), side by side.
// BIG_INBOX_HISTORY="<inbox>,<ledger>,<users>" sizes the history (default 10000000,10000000,1000000).
// Prefilling 10 million rows takes minutes and about 10 GB of disk; results go to test-output/bench/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBenchContext, machine } from './context.mjs';
import { runClosedLoop } from './lib/closed-loop.mjs';
import { stopAll } from './lib/processes.mjs';
import { benchPool } from './lib/resources.mjs';
import { round } from './lib/stats.mjs';
import { signedEvents } from './lib/stripe-events.mjs';
import { root } from './lib/workspace.mjs';

const ctx = createBenchContext();
const { resources, log, settings } = ctx;
const events = Number(process.env.BIG_INBOX_EVENTS ?? 5000);
const [historyInbox, historyLedger, historyUsers] = (process.env.BIG_INBOX_HISTORY ?? '10000000,10000000,1000000')
  .split(',')
  .map(Number);

async function measure(label, prefill) {
  const url = await resources.database(label);
  const pool = benchPool(url);
  try {
    if (prefill) {
      log(`${label}: prefilling ${historyInbox} inbox rows, ${historyLedger} ledger rows, ${historyUsers} users`);
      const started = Date.now();
      const run = spawnSync(
        process.execPath,
        [
          path.join(root, 'bench/prefill-history.mjs'),
          url,
          '--inbox',
          String(historyInbox),
          '--ledger',
          String(historyLedger),
          '--users',
          String(historyUsers),
        ],
        { stdio: 'inherit' },
      );
      if (run.status !== 0) throw new Error('prefill failed');
      log(`${label}: prefilled in ${round((Date.now() - started) / 1000)} s`);
    }
    const before = Number((await pool.query('SELECT coalesce(max(id), 0) AS id FROM inbox_events')).rows[0].id);
    const prefix = resources.prefix(label);
    // Purchases by users of the history (hist-user-*), so the per-user indexes are the big ones.
    const items = signedEvents({
      tag: `${ctx.runId}${label}`,
      count: events,
      users: Math.min(historyUsers, 10_000),
      secret: `whsec_bench_${ctx.runId}`,
      userPrefix: 'hist-user',
    });
    await ctx.checkpoint(pool);
    const ingest = await ctx.startTallyIngest(url, prefix);
    const fill = await runClosedLoop({
      url: ingest.url,
      connections: settings.connections,
      amount: items.length,
      items,
    });
    await ingest.handle.stop();
    await ctx.checkpoint(pool);
    const worker = ctx.startTallyWorker(url, prefix);
    const deadline = Date.now() + Math.max(300_000, events * 50);
    for (;;) {
      const { rows } = await pool.query(
        "SELECT count(*) FILTER (WHERE status = 'processed')::int AS done, count(*)::int AS n FROM inbox_events WHERE id > $1",
        [before],
      );
      if (rows[0].done >= events) break;
      if (Date.now() > deadline) throw new Error(`${label}: only ${rows[0].done} of ${events} drained in time`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const workerCpuMs = worker.cpuSeconds() * 1000;
    await worker.stop();
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds,
              count(*) FILTER (WHERE outcome_code = 'credited')::int AS credited,
              (SELECT count(*)::int FROM ledger_entries) AS ledger_rows,
              (SELECT count(*)::int FROM inbox_events) AS inbox_rows
         FROM inbox_events WHERE id > $1`,
      [before],
    );
    const figures = {
      label,
      inboxRows: rows[0].inbox_rows,
      ledgerRows: rows[0].ledger_rows,
      ingestRps: round(fill.rps),
      ingestNon2xx: fill.non2xx,
      drainEventsPerSecond: round((rows[0].n - 1) / rows[0].seconds),
      credited: rows[0].credited,
      workerCpuMsPerEvent: round(workerCpuMs / events, 3),
    };
    log(`${label}: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await pool.end();
  }
}

const results = {
  runId: ctx.runId,
  machine: machine(),
  events,
  historySize: { historyInbox, historyLedger, historyUsers },
};
try {
  await resources.prepareTemplate();
  results.empty = await measure('empty', false);
  results.history = await measure('history', true);
  results.ratios = {
    ingest: round(results.history.ingestRps / results.empty.ingestRps, 2),
    drain: round(results.history.drainEventsPerSecond / results.empty.drainEventsPerSecond, 2),
  };
  results.machine.loadAverageAtEnd = os.loadavg().map((value) => round(value, 2));
  console.log(JSON.stringify(results, null, 2));
  const dir = path.join(root, 'test-output/bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `${new Date().toISOString().replaceAll(':', '-').replace(/\..+/, '')}-big-inbox.json`),
    `${JSON.stringify(results, null, 2)}\n`,
  );
} catch (error) {
  process.exitCode = 1;
  log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  await stopAll();
  await resources.cleanup();
}
