import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const script = pathToFileURL(path.resolve(__dirname, '../../scripts/chaos-record.mjs')).href;

/** Runs `runSection` of scripts/chaos-record.mjs on report sections, in a child (the script is ESM). */
function runSection(sections: string[]): string {
  const code = `import { runSection } from ${JSON.stringify(script)};
process.stdout.write(runSection(JSON.parse(process.argv[1])));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code, JSON.stringify(sections)], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout;
}

const header = '| scenario | events sent | lost | faults | seconds |\n| --- | ---: | ---: | --- | ---: |';
const direct = `### 2026-12-03, commit abc1234: seed 42, profile full

Started 12:20 UTC; 26 of 26 scenarios held every invariant. Reproduce: \`CHAOS_SEED=42 npm run test:chaos\`.

${header}
| duplicate-storm | 32 | 0 | 50× each event | 3.6 |
| kill-9-workers | 400 | 0 | kill -9 ×61 | 46.1 |`;
const pooled = `### 2026-12-03, commit abc1234+dirty: seed 42, profile full, every process through PgBouncer

Started 12:36 UTC; 25 of 26 scenarios held every invariant.

${header}
| duplicate-storm | 32 | 0 | 50× each event | 2.8 |
| kill-9-workers | 400 | 1 | kill -9 ×61 | 46.1 |

Violations:

- kill-9-workers: answered 200 ⇒ inbox row: evt_1`;

describe('scripts/chaos-record.mjs runSection', () => {
  it("writes a run's passes as one section with one table, each cell once where the passes agree", () => {
    const section = runSection([direct, pooled]);
    const lines = section.split('\n');
    expect(lines[0]).toBe(
      '### 2026-12-03, commit abc1234: seed 42, profile full: direct, then every process through PgBouncer (commit abc1234+dirty)',
    );
    expect(lines.filter((line) => line.startsWith('| scenario |'))).toHaveLength(1);
    expect(lines).toContain('| duplicate-storm | 32 | 0 | 50× each event | 3.6 / 2.8 |');
    expect(lines).toContain('| kill-9-workers | 400 | 0 / 1 | kill -9 ×61 | 46.1 |');
    expect(lines).toContain(
      '- direct: Started 12:20 UTC; 26 of 26 scenarios held every invariant. Reproduce: `CHAOS_SEED=42 npm run test:chaos`.',
    );
    expect(section).toContain('every process through PgBouncer (commit abc1234+dirty): Started 12:36 UTC');
    expect(section).toContain('- kill-9-workers: answered 200 ⇒ inbox row: evt_1');
  });

  it('leaves a single pass as it is', () => {
    expect(runSection([direct])).toBe(direct);
  });
});
