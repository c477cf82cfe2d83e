import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The packages stay layered: `platform` is plumbing (configuration, logs, the BullMQ adapter, the
 * metrics registry) and takes its definitions from the apps, so it depends on no Tally package;
 * `billing-core` holds the domain and imports neither the plumbing nor an app. Every import is
 * read, type-only and dynamic ones too (ts.preProcessFile), tests included, and so are the
 * package.json dependencies and the tsconfig project references.
 */
const root = path.resolve(__dirname, '../..');

const rules: Array<{ pkg: string; forbidden: RegExp; why: string }> = [
  { pkg: 'packages/platform', forbidden: /^@tally\/|\/billing-core\b|\/apps\//, why: 'platform is plumbing' },
  {
    pkg: 'packages/billing-core',
    forbidden: /^@tally\/(?!billing-core)|\/platform\b|\/apps\/|^(express|bullmq|ioredis|pino)(\/|$)/,
    why: 'billing-core is the domain',
  },
  {
    // An app installs the client alone: it carries its generated types, never the server's code.
    pkg: 'packages/client',
    forbidden: /^@tally\/|\/billing-core\b|\/platform\b|\/apps\//,
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
  it.each(rules)('$pkg imports no package above it ($why)', ({ pkg, forbidden }) => {
    expect(forbiddenImports(path.join(root, pkg, 'src'), forbidden)).toEqual([]);
    expect(declaredDependencies(pkg).filter((name) => forbidden.test(name))).toEqual([]);
    expect(projectReferences(pkg).filter((reference) => /\.\.\//.test(reference))).toEqual([]);
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
});
