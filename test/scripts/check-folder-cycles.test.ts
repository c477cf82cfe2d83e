import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const script = path.resolve(__dirname, '../../scripts/check-folder-cycles.mjs');

/** Writes a tiny source tree ({relative path: content}) and runs the checker on it. */
function check(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'folder-cycles-'));
  try {
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), content);
    }
    const run = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Two folders and the shapes the real tree has: a top-level index that imports every folder and a
// top-level errors.ts every folder may import.
const acyclic = {
  'index.ts': "export * from './a/a';\nexport * from './b/b';\n",
  'errors.ts': 'export class E extends Error {}\n',
  'shared/x.ts': 'export const x = 1;\n',
  'a/a.ts': "import { E } from '../errors';\nimport { x } from '../shared/x';\nexport const a = [E, x];\n",
  'b/b.ts':
    "import type { a } from '../a/a';\nimport { x } from '../shared/x';\nexport type B = typeof a;\nexport const b = x;\n",
};

describe('the folder import-cycle check', () => {
  it('passes a tree whose folders import in one direction, with a top-level index and errors file', () => {
    const result = check(acyclic);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('no import cycles');
  });

  it('fails on two folders importing each other through different files, naming each import', () => {
    const result = check({
      ...acyclic,
      'a/uses-b.ts': "import { b } from '../b/b';\nexport const usesB = b;\n",
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('a <-> b');
    expect(result.stderr).toContain('a → b: a/uses-b.ts → ../b/b');
    expect(result.stderr).toContain('b → a: b/b.ts → ../a/a');
  });

  it('finds a cycle through three folders, by a re-export from a nested file', () => {
    // a → shared (a.ts), shared → b (the re-export), b → a (b.ts's type import).
    const result = check({
      ...acyclic,
      'shared/deep/y.ts': "export { b } from '../../b/b';\n",
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('a <-> b <-> shared');
    expect(result.stderr).toContain('shared → b: shared/deep/y.ts → ../../b/b');
  });

  it.each([
    ['an import type', "import type { B } from '../b/b';\nexport type A2 = B;\n"],
    ['a named type import', "import { type B } from '../b/b';\nexport type A2 = B;\n"],
    ['an export type … from', "export type { B } from '../b/b';\n"],
    ['an import() in a type', "export type A2 = import('../b/b').B;\n"],
  ])('counts a type-only back edge as part of a cycle: %s', (_form, content) => {
    // b → a is b.ts's `import type`; the type-only a → b closes the circle.
    const result = check({ ...acyclic, 'a/types.ts': content });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('a <-> b');
    expect(result.stderr).toContain('a → b: a/types.ts → ../b/b');
  });

  it('ignores test files, imports inside one folder and imports of packages', () => {
    const result = check({
      ...acyclic,
      'shared/x.test.ts': "import { a } from '../a/a';\nimport 'kysely';\n",
      'a/a2.ts': "import { a } from './a';\nexport const a2 = a;\n",
    });
    expect(result.status).toBe(0);
  });
});
