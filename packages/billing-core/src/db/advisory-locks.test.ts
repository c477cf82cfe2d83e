import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as plumbingLocks from '@tally/platform/db';
import * as advisoryLocks from './advisory-locks';

const root = path.resolve(__dirname, '../../../..');
// The two registries (the domain's and the plumbing's), this test, and the mutation check and its
// list (they quote the registry to break it on purpose).
const exempt = new Set([
  path.join(__dirname, 'advisory-locks.ts'),
  path.join(root, 'packages/platform/src/db/advisory-locks.ts'),
  __filename,
  path.join(root, 'scripts/mutation-check.mjs'),
  path.join(root, 'scripts/mutations.mjs'),
]);
const registry = [...Object.entries(advisoryLocks), ['MIGRATION_LOCK_KEY', plumbingLocks.MIGRATION_LOCK_KEY] as const];

/** Every source file of the repository (apps, packages, tests, scripts, bench). */
function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git', 'results'].includes(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (/\.(ts|mts|js|mjs|cjs|sql)$/.test(entry.name) && !exempt.has(full)) {
      files.push(full);
    }
  }
  return files;
}

describe('the advisory lock registry', () => {
  it('gives every lock its own key, each one fitting both advisory lock forms', () => {
    expect(registry.length).toBeGreaterThanOrEqual(3);
    const keys = registry.map(([, key]) => key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const [name, key] of registry) {
      // The two-key form takes int4 halves; a key in that range also fits the bigint form.
      expect({ name, valid: Number.isInteger(key) && key > 0 && key <= 2 ** 31 - 1 }).toEqual({ name, valid: true });
    }
  });

  it('is the only place a key is written: no other source file spells one out or locks a literal key', () => {
    const strays: string[] = [];
    const literalLock = /pg_(try_)?advisory_(xact_)?(lock|unlock)(_shared)?\(\s*\d/;
    for (const file of sourceFiles(root)) {
      // 7_411_001 and 7411001 alike.
      const text = readFileSync(file, 'utf8').replace(/(\d)_(?=\d)/g, '$1');
      const where = path.relative(root, file);
      if (literalLock.test(text)) strays.push(`${where}: an advisory lock on a literal key`);
      for (const [name, key] of registry) {
        if (new RegExp(`\\b${key}\\b`).test(text)) strays.push(`${where}: ${name}'s number`);
      }
    }
    expect(strays).toEqual([]);
  });
});
