import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { providers } from '@tally/billing-core';

const root = path.resolve(__dirname, '../..');

/** Every TypeScript source file of the apps, the packages and the tests. */
function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git', 'results'].includes(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (/\.(ts|mts)$/.test(entry.name)) files.push(full);
  }
  return files;
}

const files = ['apps', 'packages', 'test'].flatMap((dir) => sourceFiles(path.join(root, dir)));

/** The files (relative to the repository) whose text matches `pattern`, but for `exempt`. */
function filesMatching(pattern: RegExp, exempt: readonly string[]): string[] {
  return files
    .filter((file) => !exempt.includes(file) && pattern.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(root, file));
}

describe('facts written in one place', () => {
  it('spells the provider list only in billing-core providers: no other list, union or enum of their names', () => {
    expect(providers).toEqual(['stripe', 'revenuecat', 'apple', 'google_play']);
    const name = `['"](?:stripe|revenuecat|apple|google_play)['"]`;
    const list = new RegExp(`${name}\\s*(?:,|\\|)\\s*${name}`);
    // The client's types are generated from the api's document, which takes the list from providers.
    const generated = path.join(root, 'packages/client/src/api-types.ts');
    expect(
      // The model check restates the contract on purpose, sharing no code with the implementation.
      filesMatching(list, [
        path.join(root, 'packages/billing-core/src/db/providers.ts'),
        generated,
        __filename,
        path.join(root, 'test/model/money-model.ts'),
      ]),
    ).toEqual([]);
  });
});

describe('durations in SQL', () => {
  it('writes a duration in milliseconds only through sqlMilliseconds: no make_interval(secs => …) or interval-multiplying idiom elsewhere', () => {
    const idiom = /make_interval\(\s*secs\s*=>|\*\s*interval\s*'1 millisecond'|interval\s*'1 millisecond'\s*\*/;
    const sources = files.filter((file) => file.includes('/src/') && !/\.test\.ts$/.test(file));
    const strays = sources
      .filter((file) => file !== path.join(root, 'packages/platform/src/db/sql-milliseconds.ts'))
      .filter((file) => idiom.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(root, file));
    expect(strays).toEqual([]);
  });
});
