import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

/** The repository's documentation: README, docs/, bench/ and infra/ READMEs. */
const pages = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
  'bench/README.md',
  'infra/README.md',
  'infra/postgres/README.md',
];

/** Every Markdown file of the repository but dependencies' and outputs' (the pages above included). */
function markdownFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      return ['node_modules', 'dist', 'test-output', '.git'].includes(entry.name) ? [] : markdownFiles(relative);
    }
    return entry.name.endsWith('.md') ? [relative] : [];
  });
}

/** Lines outside fenced code blocks. */
function proseOf(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').filter((line) => {
    if (line.trimStart().startsWith('```')) {
      inFence = !inFence;
      return false;
    }
    return !inFence;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseOf(markdown)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** A path under the repository, or a last segment with `*` matching a file of its folder. */
function matchesAFile(named: string): boolean {
  if (existsSync(path.join(root, named))) return true;
  const folder = path.join(root, path.dirname(named));
  const last = path.basename(named);
  if (!last.includes('*') || !existsSync(folder)) return false;
  const pattern = new RegExp(`^${last.split('*').map(escapeRegExp).join('.*')}$`);
  return readdirSync(folder).some((file) => pattern.test(file));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

describe('documentation links', () => {
  it('point at files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const lines = proseOf(readFileSync(path.join(root, page), 'utf8'));
      for (const line of lines) {
        for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = match[1] ?? '';
          if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
          checked += 1;
          const [file = '', anchor] = target.split('#');
          const resolved =
            file === '' ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file);
          if (!existsSync(resolved)) {
            broken.push(`${page}: ${target} (no such file)`);
            continue;
          }
          if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile()) {
            if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor))
              broken.push(`${page}: ${target} (no such heading)`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('name test files and folders that exist (`test/…` in code spans, `*` as a wildcard)', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const line of proseOf(readFileSync(path.join(root, page), 'utf8'))) {
        for (const match of line.matchAll(/`(test\/[^`\s]+)`/g)) {
          const named = match[1] ?? '';
          checked += 1;
          if (!matchesAFile(named)) missing.push(`${page}: ${named}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('keeps every page a reference: none over 350 lines (history lives in git)', () => {
    const files = markdownFiles('.');
    expect(files).toEqual(expect.arrayContaining(pages));
    const long = files
      .map((file) => ({ file, lines: readFileSync(path.join(root, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 350);
    expect(long).toEqual([]);
  });

  it('derives the anchors GitHub derives', () => {
    expect([
      ...anchorsOf(
        "## CLI: `--json` and exit codes\n## One event's life\n## Users and links (`user_aliases`)\n## A\n## A\n",
      ),
    ]).toEqual(['cli---json-and-exit-codes', 'one-events-life', 'users-and-links-user_aliases', 'a', 'a-1']);
  });
});
