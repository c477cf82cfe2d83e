import { mkdirSync, writeFileSync } from 'node:fs';
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
  faults: string[];
  invariantsHeld: boolean;
  violations: Violation[];
  durationMs: number;
  notes: string[];
}

export function toMarkdown(seed: number, profile: string, results: ScenarioResult[], viaPgBouncer = false): string {
  const lines = [
    `# Chaos run — seed ${seed}, profile ${profile}${viaPgBouncer ? ', every process through PgBouncer' : ''}`,
    '',
    `Reproduce: \`CHAOS_SEED=${seed} CHAOS_PROFILE=${profile}${viaPgBouncer ? ' CHAOS_VIA_PGBOUNCER=1' : ''} npm run test:chaos\``,
    '',
    '| scenario | events sent | deliveries | accepted | lost | applied twice | parked | faults | invariants held | seconds |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |',
    ...results.map(
      (r) =>
        `| ${r.scenario} | ${r.events} | ${r.deliveries} | ${r.accepted} | ${r.lost} | ${r.appliedTwice} | ${r.parked} | ${
          r.faults.join(', ') || '—'
        } | ${r.invariantsHeld ? 'yes' : `**no** (${r.violations.length})`} | ${(r.durationMs / 1000).toFixed(1)} |`,
    ),
    '',
  ];
  for (const r of results) {
    if (r.violations.length === 0 && r.notes.length === 0) continue;
    lines.push(`## ${r.scenario}`, '');
    for (const v of r.violations) lines.push(`- VIOLATION ${v.invariant}: ${v.detail}`);
    for (const note of r.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** Writes test-output/chaos-<seed><suffix>.json and .md; returns the markdown path. */
export function writeReport(
  root: string,
  seed: number,
  profile: string,
  results: ScenarioResult[],
  viaPgBouncer = false,
): string {
  const suffix = viaPgBouncer ? '-pgbouncer' : '';
  const dir = path.join(root, 'test-output');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `chaos-${seed}${suffix}.json`),
    `${JSON.stringify({ seed, profile, viaPgBouncer, finishedAt: new Date().toISOString(), results }, null, 2)}\n`,
  );
  const file = path.join(dir, `chaos-${seed}${suffix}.md`);
  writeFileSync(file, toMarkdown(seed, profile, results, viaPgBouncer));
  return file;
}
