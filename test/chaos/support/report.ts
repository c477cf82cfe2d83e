import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Violation } from './invariants';

export interface ScenarioResult {
  scenario: string;
  /** Distinct events the providers sent. */
  events: number;
  /** HTTP deliveries (duplicates and retries included). */
  deliveries: number;
  /** Distinct events answered 200 at least once. */
  accepted: number;
  lost: number;
  appliedTwice: number;
  parked: number;
  /** App webhook messages written during the scenario, how many failed, how many the receiver accepted twice. */
  appWebhooks: { messages: number; failed: number; acceptedTwice: number; received: number };
  faults: string[];
  invariantsHeld: boolean;
  violations: Violation[];
  durationMs: number;
  notes: string[];
}

/** What the report says about the run itself: when, on which commit, how loaded the machine was. */
export interface RunInfo {
  seed: number;
  profile: string;
  viaPgBouncer: boolean;
  startedAt: Date;
  /** `git describe`-like: the short commit, `+dirty` when the work tree had changes. */
  commit: string;
  loadAtStart: string;
  loadAtEnd?: string;
  durationMs?: number;
}

export function runInfo(root: string, seed: number, profile: string, viaPgBouncer: boolean): RunInfo {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }).toString();
    if (dirty.trim()) commit += '+dirty';
  } catch {
    // Not a git checkout: the report says so.
  }
  return { seed, profile, viaPgBouncer, startedAt: new Date(), commit, loadAtStart: loadAverage() };
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
}

export function finishRun(run: RunInfo): RunInfo {
  return { ...run, loadAtEnd: loadAverage(), durationMs: Date.now() - run.startedAt.getTime() };
}

const reproduce = (run: RunInfo) =>
  `CHAOS_SEED=${run.seed} CHAOS_PROFILE=${run.profile}${run.viaPgBouncer ? ' CHAOS_VIA_PGBOUNCER=1' : ''} npm run test:chaos`;

/** The results table (one row per scenario). */
export function resultsTable(results: ScenarioResult[]): string[] {
  return [
    '| scenario | events sent | deliveries | accepted | lost | applied twice | parked | app webhooks (failed, accepted twice) | faults | invariants held | seconds |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |',
    ...results.map(
      (r) =>
        `| ${r.scenario} | ${r.events} | ${r.deliveries} | ${r.accepted} | ${r.lost} | ${r.appliedTwice} | ${r.parked} | ${
          r.appWebhooks.messages
        } (${r.appWebhooks.failed}, ${r.appWebhooks.acceptedTwice}) | ${r.faults.join(', ') || '—'} | ${
          r.invariantsHeld ? 'yes' : `**no** (${r.violations.length})`
        } | ${(r.durationMs / 1000).toFixed(1)} |`,
    ),
  ];
}

/**
 * The run as a markdown section: heading (date, commit, seed, profile), the machine's load, the
 * table, then every violation and note per scenario. `scripts/chaos-record.mjs` copies these
 * sections into docs/reliability.md ("Latest full run").
 */
export function toMarkdown(run: RunInfo, results: ScenarioResult[]): string {
  const held = results.filter((r) => r.invariantsHeld).length;
  const total = results.reduce(
    (sum, r) => ({
      events: sum.events + r.events,
      deliveries: sum.deliveries + r.deliveries,
      lost: sum.lost + r.lost,
      twice: sum.twice + r.appliedTwice,
      messages: sum.messages + r.appWebhooks.messages,
    }),
    { events: 0, deliveries: 0, lost: 0, twice: 0, messages: 0 },
  );
  const lines = [
    `### ${run.startedAt.toISOString().slice(0, 10)}, commit ${run.commit}: seed ${run.seed}, profile ${run.profile}${
      run.viaPgBouncer ? ', every process through PgBouncer' : ''
    }`,
    '',
    `Started ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores${
      process.env.CHAOS_STARVE ? `, ${process.env.CHAOS_STARVE} busy loops of CHAOS_STARVE running` : ''
    }; load average ${run.loadAtStart} at the start${run.loadAtEnd ? `, ${run.loadAtEnd} at the end` : ''}${
      run.durationMs !== undefined ? `; ${(run.durationMs / 1000).toFixed(0)} s` : ''
    }. ${held} of ${results.length} scenarios held every invariant; ${total.events} events in ${
      total.deliveries
    } deliveries, ${total.lost} lost, ${total.twice} applied twice; ${total.messages} app webhook messages. Reproduce: \`${reproduce(run)}\`.`,
    '',
    ...resultsTable(results),
    '',
  ];
  for (const r of results) {
    if (r.violations.length === 0 && r.notes.length === 0) continue;
    lines.push(`#### ${r.scenario}`, '');
    for (const v of r.violations) lines.push(`- VIOLATION ${v.invariant}: ${v.detail}`);
    for (const note of r.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** Writes test-output/chaos-<seed><suffix>.json and .md; returns the markdown path. */
export function writeReport(root: string, run: RunInfo, results: ScenarioResult[]): string {
  const suffix = run.viaPgBouncer ? '-pgbouncer' : '';
  const dir = path.join(root, 'test-output');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `chaos-${run.seed}${suffix}.json`),
    `${JSON.stringify({ ...run, finishedAt: new Date().toISOString(), results }, null, 2)}\n`,
  );
  const file = path.join(dir, `chaos-${run.seed}${suffix}.md`);
  writeFileSync(file, toMarkdown(run, results));
  return file;
}
