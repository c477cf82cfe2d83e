// `node scripts/check-folder-cycles.mjs [dir…]` (run by `npm test`): fails when the folders of a
// source tree import each other in a cycle. Biome's noImportCycles sees file cycles only; two
// folders can depend on each other through different files without one file cycle. Each
// top-level folder under dir is a node, and so is each file at the top level (index.ts imports
// every folder, and every folder may import errors.ts: one node for the top level would be a cycle
// by construction). Without arguments it checks every source tree of the workspace (apps/*/src,
// packages/*/src). Relative imports and re-exports count, type-only ones too (`import type`,
// `export type … from`, `import('…')` in a type: an import that points back is a dependency of the
// design even when the compiler erases it); test files (*.test.ts) do not. Prints every import
// behind each edge of a cycle found; exit 1 on a cycle.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The src folder of every app and package (apps/<name>/src, packages/<name>/src). */
function workspaceSourceTrees() {
  return ['apps', 'packages'].flatMap((group) =>
    readdirSync(path.join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(root, group, entry.name, 'src'))
      .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory()),
  );
}

/** Every .ts file under dir but tests and declarations. */
function sourceFiles(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (/\.ts$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name)) files.push(full);
  }
  return files;
}

/** The node a path under dir belongs to: its top-level folder, or the top-level file itself. */
function nodeOf(dir, file) {
  const [first] = path.relative(dir, file).split(path.sep);
  return first ?? '.';
}

/** The file a relative specifier names, as TypeScript resolves it (x.js → x.ts, x → x/index.ts). */
function resolve(fromFile, specifier) {
  const base = path.resolve(path.dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, path.join(base, 'index.ts'), base];
  return candidates.find((candidate) => {
    try {
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The folder-level import graph of dir: node → node → the imports behind that edge
 * (`file → specifier`). Imports within one node and imports leaving dir are not edges.
 */
export function folderGraph(dir) {
  const graph = new Map();
  for (const file of sourceFiles(dir)) {
    const from = nodeOf(dir, file);
    if (!graph.has(from)) graph.set(from, new Map());
    // preProcessFile lists every import, export … from, require and import() of the file, type-only
    // ones included.
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(file, specifier);
      if (!target || path.relative(dir, target).startsWith('..')) continue;
      const to = nodeOf(dir, target);
      if (to === from) continue;
      const edges = graph.get(from);
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to).push(`${path.relative(dir, file)} → ${specifier}`);
    }
  }
  return graph;
}

/** The strongly connected components with more than one node (Tarjan): each holds a cycle. */
export function findCycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** Prints the cycles of one tree; whether it had none. */
function checkTree(dir) {
  const graph = folderGraph(dir);
  const cycles = findCycles(graph);
  const where = path.relative(process.cwd(), dir) || '.';
  if (cycles.length === 0) {
    console.log(`[check] no import cycles between the folders of ${where} (${graph.size} nodes)`);
    return true;
  }
  console.error(`[check] import cycles between the folders of ${where}:`);
  for (const cycle of cycles) {
    console.error(`  ${cycle.join(' <-> ')}`);
    for (const from of cycle) {
      for (const [to, imports] of graph.get(from) ?? []) {
        if (!cycle.includes(to)) continue;
        for (const line of imports) console.error(`    ${from} → ${to}: ${line}`);
      }
    }
  }
  return false;
}

function main() {
  const dirs = process.argv.length > 2 ? process.argv.slice(2).map((dir) => path.resolve(dir)) : workspaceSourceTrees();
  const results = dirs.map(checkTree);
  if (results.includes(false)) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
