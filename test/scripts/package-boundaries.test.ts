import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The packages stay layered: `platform` is plumbing (configuration, logs, the BullMQ adapter, the
 * metrics registry, the Postgres pool, transactions, leases and the migration runner) and takes its
 * definitions from the apps and the domain, so it depends on no Tally package; `billing-core` holds
 * the domain and imports no app and, of the plumbing, only its Postgres part and that part's test
 * database (`@tally/platform/db`, `@tally/platform/testing`: no HTTP, queue or log library). Every
 * import is read, type-only and dynamic ones too (ts.preProcessFile), tests included, and so are the
 * package.json dependencies and the tsconfig project references.
 */
const root = path.resolve(__dirname, '../..');

/** `dependsOn`: the Tally packages it may declare and reference (a package.json name and its folder). */
const rules: Array<{
  pkg: string;
  forbidden: RegExp;
  dependsOn: Array<{ name: string; folder: string }>;
  why: string;
}> = [
  {
    pkg: 'packages/platform',
    forbidden: /^@tally\/|\/billing-core\b|\/apps\//,
    dependsOn: [],
    why: 'platform is plumbing',
  },
  {
    pkg: 'packages/billing-core',
    forbidden:
      /^@tally\/(?!billing-core|platform\/(db|testing)$)|^\.\.?\/(.*\/)?platform\b|\/apps\/|^(express|bullmq|ioredis|pino)(\/|$)/,
    dependsOn: [{ name: '@tally/platform', folder: '../platform' }],
    why: 'billing-core is the domain, on the Postgres plumbing',
  },
  {
    // An app installs the client alone: it carries its generated types, never the server's code.
    pkg: 'packages/client',
    forbidden: /^@tally\/|\/billing-core\b|\/platform\b|\/apps\//,
    dependsOn: [],
    why: 'the client stands alone',
  },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(full);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** `file: specifier` for every import of a file that breaks the rule. */
function forbiddenImports(dir: string, forbidden: RegExp): string[] {
  return sourceFiles(dir).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map((imported) => imported.fileName)
      .filter((specifier) => forbidden.test(specifier))
      .map((specifier) => `${path.relative(root, file)}: ${specifier}`),
  );
}

function declaredDependencies(pkg: string): string[] {
  const manifest = JSON.parse(readFileSync(path.join(root, pkg, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >;
  return ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) =>
    Object.keys(manifest[field] ?? {}),
  );
}

function projectReferences(pkg: string): string[] {
  const config = ts.readConfigFile(path.join(root, pkg, 'tsconfig.json'), ts.sys.readFile).config as {
    references?: Array<{ path: string }>;
  };
  return (config.references ?? []).map((reference) => reference.path);
}

describe('package boundaries', () => {
  it.each(rules)('$pkg imports no package above it ($why)', ({ pkg, forbidden, dependsOn }) => {
    expect(forbiddenImports(path.join(root, pkg, 'src'), forbidden)).toEqual([]);
    const allowedNames = dependsOn.map((dependency) => dependency.name);
    const allowedFolders = dependsOn.map((dependency) => dependency.folder);
    expect(declaredDependencies(pkg).filter((name) => /^@tally\//.test(name) || forbidden.test(name))).toEqual(
      allowedNames,
    );
    expect(projectReferences(pkg).filter((reference) => /\.\.\//.test(reference))).toEqual(allowedFolders);
  });

  it('sees type-only, re-exported and dynamic imports', () => {
    const source = [
      "import type { DB } from '@tally/billing-core';",
      "export { x } from '../../billing-core/src/x';",
      "const later = import('@tally/billing-core');",
    ].join('\n');
    const specifiers = ts.preProcessFile(source, true, true).importedFiles.map((imported) => imported.fileName);
    expect(specifiers).toEqual(['@tally/billing-core', '../../billing-core/src/x', '@tally/billing-core']);
    expect(specifiers.every((specifier) => rules[0]?.forbidden.test(specifier))).toBe(true);
  });

  it('lets billing-core take the Postgres plumbing and its test database, not the rest of platform', () => {
    const domain = rules[1]?.forbidden ?? /$^/;
    const forbiddenOf = (specifiers: string[]) => specifiers.filter((specifier) => domain.test(specifier));
    expect(forbiddenOf(['@tally/platform/db', '@tally/platform/testing', '@tally/billing-core/testing'])).toEqual([]);
    const refused = ['@tally/platform', '@tally/platform/http', '../../platform/src/db/create-db', '@tally/api'];
    expect(forbiddenOf(refused)).toEqual(refused);
  });
});
