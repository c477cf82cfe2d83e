import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const biome = path.join(root, 'node_modules/@biomejs/biome/bin/biome');

/** The repository's noImportCycles setting, exactly as biome.json has it. */
function repoImportCyclesRule(): unknown {
  const config = JSON.parse(readFileSync(path.join(root, 'biome.json'), 'utf8'));
  return config.linter.rules.suspicious.noImportCycles;
}

/** Lints a tiny tree ({relative path: content}) with only the repository's noImportCycles rule on. */
function lint(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'biome-cycles-'));
  try {
    const config = {
      linter: { rules: { recommended: false, suspicious: { noImportCycles: repoImportCyclesRule() } } },
    };
    writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), content);
    }
    const run = spawnSync(process.execPath, [biome, 'lint', '--max-diagnostics=50', '.'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const view = "import { readSection } from './read-section';\nexport const view = () => readSection();\n";

describe("biome's import-cycle rule as biome.json configures it", () => {
  it('fails a circle whose back edge is a type-only import', () => {
    const result = lint({
      'src/view.ts': `${view}export type View = { n: number };\n`,
      'src/read-section.ts':
        "import type { View } from './view';\nexport const readSection = (): View => ({ n: 1 });\n",
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain('noImportCycles');
    expect(result.output).toContain('read-section.ts');
  });

  it('passes the same files when the shared type lives in a file of its own', () => {
    const result = lint({
      'src/view.ts': view,
      'src/view-types.ts': 'export type View = { n: number };\n',
      'src/read-section.ts':
        "import type { View } from './view-types';\nexport const readSection = (): View => ({ n: 1 });\n",
    });
    expect(result.status).toBe(0);
  });
});
