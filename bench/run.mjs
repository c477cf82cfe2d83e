// `pnpm bench` (node scripts/run.mjs bench, which builds first): Tally against baselines measured
// in the same run, on private resources it creates and removes itself (a database per phase made
// from billing-core's migrations, a queue prefix per phase, Tally's built ingest and worker and
// the baseline servers on free loopback ports). Every target is a ratio to a same-run baseline;
// the targets are taken over rounds run in alternating order, reporting the median.
//
// This file is the orchestration: the run's context (context.mjs), one module per phase returning
// its figures (phases/ingest.mjs, drain.mjs, e2e.mjs, idempotency.mjs, holds.mjs, spend.mjs, app-webhooks.mjs), the targets
// as data (targets.mjs) and the report (report.mjs).
//
// BENCH_PROFILE=smoke: a few seconds, to check the bench runs; BENCH_ONLY=ingest (or drain, e2e,
// idempotency, holds, spend, app-webhooks, comma-separated) runs only those phases. See bench/README.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBenchContext, machine, tallyEnvironment } from './context.mjs';
import { round } from './lib/stats.mjs';
import { root } from './lib/workspace.mjs';
import { appWebhooksPhase } from './phases/app-webhooks.mjs';
import { drainPhase } from './phases/drain.mjs';
import { endToEndPhase } from './phases/e2e.mjs';
import { holdsPhase } from './phases/holds.mjs';
import { idempotencyPhase } from './phases/idempotency.mjs';
import { ingestPhase } from './phases/ingest.mjs';
import { spendPhase } from './phases/spend.mjs';
import { evaluateTargets, formatReport } from './report.mjs';

const ctx = createBenchContext();
const { settings, runId, resources, log, startedAt } = ctx;
const results = { runId, settings, tallyEnvironment, machine: machine(), rounds: {}, figures: {}, ratios: {} };

/** The phases in the order they run; each returns `{rounds, figures}`. */
const phases = [
  ['ingest', 'ingest', () => ingestPhase(ctx)],
  ['drain', 'drain', () => drainPhase(ctx)],
  ['e2e', 'endToEnd', () => endToEndPhase(ctx, results.figures)],
  ['idempotency', 'idempotency', () => idempotencyPhase(ctx)],
  ['holds', 'holds', () => holdsPhase(ctx)],
  ['spend', 'spend', () => spendPhase(ctx)],
  ['app-webhooks', 'appWebhooks', () => appWebhooksPhase(ctx)],
];

async function main() {
  const only = new Set((process.env.BENCH_ONLY ?? phases.map(([name]) => name).join(',')).split(','));
  log(`profile ${settings.profile}; run ${runId}; Tally processes with ${JSON.stringify(tallyEnvironment)}`);
  const postgres = await ctx.startPostgres();
  if (postgres) log(`private Postgres cluster on port ${postgres.port} (pg_stat_statements)`);
  await resources.prepareTemplate();
  for (const [name, figuresKey, run] of phases) {
    if (!only.has(name)) continue;
    const { rounds, figures } = await run();
    Object.assign(results.rounds, rounds);
    results.figures[figuresKey] = figures;
  }
  results.machine.loadAverageAtEnd = os.loadavg().map((value) => round(value, 2));
  results.durationSeconds = round((Date.now() - startedAt) / 1000);
  results.targets = evaluateTargets(results.figures, settings);
  console.log(formatReport(results));
  // A partial run (BENCH_ONLY) or a smoke run is an experiment: kept out of bench/results/.
  const complete = phases.every(([name]) => only.has(name)) && settings.profile === 'full';
  const dir = path.join(root, complete ? 'bench/results' : 'test-output/bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(
    dir,
    `${new Date().toISOString().replaceAll(':', '-').replace(/\..+/, '')}-${settings.profile}.json`,
  );
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${path.relative(process.cwd(), file)} (${results.durationSeconds}s)`);
}

const cleanup = ctx.cleanup;

try {
  await main();
} catch (error) {
  process.exitCode = 1;
  log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
} finally {
  await cleanup();
}
