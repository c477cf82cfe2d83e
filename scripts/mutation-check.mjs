// `npm run test:mutations` (docs/testing.md#mutation-check): each mutation of scripts/mutations.mjs
// removes one guard, runs the tests that should notice, expects them to FAIL, and restores the file
// (also on Ctrl-C); exit 1 if any survives. A guard is found by its marker, a comment line right
// before the guarded code (`// guard: <name>`, `-- guard:` in SQL, `# guard:` in YAML,
// `<!-- guard: <name> -->` in Markdown), which marks the code that starts first after it: the
// syntax node starting there (TypeScript, JavaScript), up to the line ending in `;` (SQL), the key
// with its indented lines (YAML), the block (Markdown). A landed migration cannot take a marker
// (migrate() checks its checksum): its guards are named by `file` and text.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt, log, root } from './bootstrap.mjs';

const markerPrefix = { sql: '--', yml: '#', yaml: '#', md: '<!--' };
const codeExtensions = new Set(['ts', 'tsx', 'mts', 'cts', 'js', 'mjs', 'cjs']);
const skippedFolders = new Set(['node_modules', 'dist', 'coverage', 'test-output', 'bench/results']);
const extensionOf = (file) => path.extname(file).slice(1);

/** The marker's comment syntax in a file (null: a file kind that carries no markers). */
function prefixOf(file) {
  const ext = extensionOf(file);
  return codeExtensions.has(ext) ? '//' : (markerPrefix[ext] ?? null);
}

/** Every file of the tree that can carry a marker, relative to `tree`. */
function markableFiles(tree, folder = '') {
  const found = [];
  for (const entry of readdirSync(path.join(tree, folder), { withFileTypes: true })) {
    const relative = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      const skipped = entry.name.startsWith('.') || skippedFolders.has(entry.name) || skippedFolders.has(relative);
      if (!skipped) found.push(...markableFiles(tree, relative));
    } else if (prefixOf(entry.name)) found.push(relative);
  }
  return found;
}

/** name -> [{ file, after }]: `after` is the offset just past the marker's line. */
export function findMarkers(tree, files = markableFiles(tree)) {
  const markers = new Map();
  for (const file of files) {
    const prefix = prefixOf(file).replace(/[/!-]/g, '\\$&');
    const pattern = new RegExp(`^[ \\t]*${prefix}[ \\t]*guard:[ \\t]*([a-z0-9][a-z0-9-]*)[^\\n]*\\n?`, 'gm');
    for (const match of readFileSync(path.join(tree, file), 'utf8').matchAll(pattern)) {
      const places = markers.get(match[1]) ?? [];
      places.push({ file, after: match.index + match[0].length });
      markers.set(match[1], places);
    }
  }
  return markers;
}

let ts;
/** The outermost syntax node that starts first at or after `after` (TypeScript and JavaScript). */
function codeRegion(file, text, after) {
  ts ??= createRequire(import.meta.url)('typescript');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  // A `?` or `:` of a conditional is a child node too; a marker marks code, not punctuation.
  const punctuation = { first: ts.SyntaxKind.FirstPunctuation, last: ts.SyntaxKind.LastPunctuation };
  let best;
  const visit = (node) => {
    if (node.end <= after || (node.kind >= punctuation.first && node.kind <= punctuation.last)) return;
    const start = node.getStart(source);
    if (start >= after) {
      if (!best || start < best.start) best = { start, end: node.end };
      return;
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return best;
}

/** [start, end) of the code a marker marks (see the header); undefined when nothing follows it. */
export function markedRegion(file, text, after) {
  if (codeExtensions.has(extensionOf(file))) return codeRegion(file, text, after);
  const lines = text.slice(after).split('\n');
  const first = lines.findIndex((line) => line.trim() !== '');
  if (first < 0) return undefined;
  const indent = (line) => line.length - line.trimStart().length;
  let last = first;
  const ext = extensionOf(file);
  if (ext === 'sql') while (last < lines.length - 1 && !/;\s*(--.*)?$/.test(lines[last])) last += 1;
  else if (ext === 'md') while (last < lines.length - 1 && lines[last + 1].trim() !== '') last += 1;
  else {
    for (let next = first + 1; next < lines.length; next += 1) {
      if (lines[next].trim() === '') continue;
      if (indent(lines[next]) <= indent(lines[first])) break;
      last = next;
    }
  }
  const offset = (n) => after + lines.slice(0, n).reduce((sum, line) => sum + line.length + 1, 0);
  return { start: offset(first) + indent(lines[first]), end: offset(last) + lines[last].length };
}

/** `from` as a pattern in which any run of whitespace matches any other run. */
function guardPattern(from) {
  const words = from.trim().split(/\s+/);
  return new RegExp(words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'), 'g');
}

/** The matches of `from` that start in [start, end). */
function matchesIn(text, from, start, end) {
  const pattern = guardPattern(from);
  pattern.lastIndex = start;
  const found = [];
  for (let match = pattern.exec(text); match && match.index < end; match = pattern.exec(text)) {
    found.push(match);
    pattern.lastIndex = match.index + 1;
  }
  return found;
}

/**
 * What a mutation does: { file, original, mutated }. Throws an Error naming the mutation when its
 * marker is missing or duplicated or when its change no longer applies to the marked code.
 */
export function planMutation(mutation, markers, tree) {
  const fail = (problem) => {
    throw new Error(`mutation "${mutation.name}": ${problem}`);
  };
  const places = mutation.guard ? (markers.get(mutation.guard) ?? []) : [{ file: mutation.file }];
  if (places.length === 0) fail(`no marker "guard: ${mutation.guard}" in the tree`);
  if (places.length > 1) fail(`marker "guard: ${mutation.guard}" ${places.length} times: ${places.map((p) => p.file)}`);
  if (!mutation.guard && !/(^|\/)migrations\/\d{4}_\w+\.sql$/.test(mutation.file ?? ''))
    fail('names no guard (only a landed migration, which cannot take a marker, is named by file and text)');
  const { file, after } = places[0];
  const original = readFileSync(path.join(tree, file), 'utf8');
  const where = mutation.guard ? `the code marked "guard: ${mutation.guard}" in ${file}` : file;
  const { start, end } = mutation.guard
    ? (markedRegion(file, original, after) ?? fail(`nothing after its marker in ${file}`))
    : { start: 0, end: Number.POSITIVE_INFINITY };
  if (mutation.del) {
    const lineStart = original.lastIndexOf('\n', start - 1) + 1;
    if (original.slice(lineStart, start).trim() !== '') fail(`${where} starts mid-line; delete no longer applies`);
    const rest = /^[,;]?[ \t]*(\/\/[^\n]*)?(\n|$)/.exec(original.slice(end));
    if (!rest) fail(`${where} shares its last line with other code; delete no longer applies`);
    return { file, original, mutated: original.slice(0, lineStart) + original.slice(end + rest[0].length) };
  }
  const found = matchesIn(original, mutation.from, start, end);
  if (found.length !== 1) fail(`"${mutation.from.trim()}" found ${found.length} times in ${where} (want once)`);
  const [match] = found;
  const mutated = original.slice(0, match.index) + mutation.to.trim() + original.slice(match.index + match[0].length);
  return { file, original, mutated };
}

/** Every problem of the list against the tree: markers missing, duplicated, unused or inapplicable, tests missing. */
export function checkMutations(mutations, tree) {
  const files = markableFiles(tree);
  const markers = findMarkers(tree, files);
  const problems = [];
  // Jest takes each as a pattern of paths: one that matches no test file would "fail" every time.
  const testFiles = files.filter((file) => file.endsWith('.test.ts'));
  for (const { name, tests } of mutations) {
    for (const test of tests.filter((pattern) => !testFiles.some((file) => new RegExp(pattern).test(file))))
      problems.push(`mutation "${name}": its tests ${test} match no test file`);
  }
  const plans = new Map();
  for (const mutation of mutations) {
    try {
      plans.set(mutation, planMutation(mutation, markers, tree));
    } catch (error) {
      problems.push(error.message);
    }
  }
  const named = new Set(mutations.map((mutation) => mutation.guard));
  for (const [name, places] of markers) {
    if (!named.has(name)) problems.push(`marker "guard: ${name}" in ${places[0].file} is named by no mutation`);
  }
  return { plans, problems };
}

/** Applies one mutation, runs its tests and restores the file; true when the tests failed. */
function runMutation(mutation, plan) {
  const file = path.join(root, plan.file);
  const restore = () => writeFileSync(file, plan.original);
  // Also when something exits the process mid-mutation (a rebuild of the mutated tree that fails
  // exits from ensureBuilt): never leave a guard removed.
  process.once('exit', restore);
  const interrupted = () => {
    restore();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  writeFileSync(file, plan.mutated);
  try {
    if (mutation.build) ensureBuilt();
    log(`mutation: ${mutation.name}`);
    const run = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/jest/bin/jest.js'), '--silent', ...mutation.tests],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (run.status === 0) {
      log(`  SURVIVED: ${mutation.tests.join(' ')} stayed green`);
      return false;
    }
    const failed = run.stderr.split('\n').filter((line) => line.startsWith('  ● '));
    log(`  caught by: ${[...new Set(failed)].map((line) => line.slice(4)).join('; ') || 'a failing run'}`);
    return true;
  } finally {
    restore();
    process.removeListener('exit', restore);
    process.removeListener('SIGINT', interrupted);
    if (mutation.build) ensureBuilt();
  }
}

const usage = `usage: npm run test:mutations            every mutation: remove a guard, run its tests, expect a failure, restore
       MUTATIONS=<part of a name> ...   only the mutations whose name or guard contains it
       MUTATIONS_DRY_RUN=1 ...          only check that every marker is found once and every mutation applies (no file is edited)
       MUTATIONS_ROOT=<dir> ...         check another tree (its scripts/mutations.mjs); the check's own test uses it
       node scripts/mutation-check.mjs --list   the mutations' guards, names, files and the tests that must catch them`;

async function main(args) {
  if (args.includes('--help') || args.includes('-h')) return console.log(usage);
  // Settings come from the environment; an argument other than --list is a mistake, and the full
  // check edits the tree, so it does not start on one.
  if (args.some((arg) => arg !== '--list')) {
    console.error(`unknown argument ${args.find((arg) => arg !== '--list')}\n${usage}`);
    process.exit(2);
  }
  const tree = path.resolve(process.env.MUTATIONS_ROOT ?? root);
  const { mutations } = await import(pathToFileURL(path.join(tree, 'scripts/mutations.mjs')).href);
  const { plans, problems } = checkMutations(mutations, tree);
  for (const problem of problems) log(problem);
  if (problems.length > 0) {
    log(`${problems.length} problem(s) with the mutation markers: fix the marker or scripts/mutations.mjs`);
    process.exit(2);
  }
  if (args.includes('--list')) {
    for (const mutation of mutations)
      console.log(
        `${mutation.guard ?? '(frozen)'}: ${mutation.name}\n    ${plans.get(mutation).file} -> ${mutation.tests.join(' ')}`,
      );
    return;
  }
  // MUTATIONS_DRY_RUN=1: only the checks above (seconds, no test run).
  if (process.env.MUTATIONS_DRY_RUN === '1') return log(`${mutations.length} mutations, every marker found once`);
  const only = process.env.MUTATIONS;
  const selected = mutations.filter((m) => !only || m.name.includes(only) || m.guard?.includes(only));
  if (selected.length === 0 || tree !== root) {
    log(
      selected.length === 0
        ? `no mutation's name or guard contains "${only}"`
        : 'MUTATIONS_ROOT only with a dry run or --list',
    );
    process.exit(2);
  }
  let survived = 0;
  for (const mutation of selected) if (!runMutation(mutation, plans.get(mutation))) survived += 1;
  process.exit(survived === 0 ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main(process.argv.slice(2));
