// `node scripts/chaos-record.mjs <report.md>…`: puts chaos reports (test-output/chaos-<seed>.md,
// and -pgbouncer.md for the run through PgBouncer) into docs/reliability.md as its "Latest full
// run", between the chaos:latest-full-run markers, replacing what was there: the passes of one run
// as one section with one table. The figures, dates, commits and load averages come from the
// reports as the runs wrote them, with every violation; the notes stay in the reports.
// `CHAOS_RECORD=1 CHAOS_PROFILE=full npm run test:chaos` runs both passes and then this.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const doc = path.join(root, 'docs/reliability.md');
const start = '<!-- chaos:latest-full-run:start (written by scripts/chaos-record.mjs) -->';
const end = '<!-- chaos:latest-full-run:end -->';

/**
 * One report as a docs section: its heading, summary and table, then the violations per scenario
 * (the notes stay in the report under test-output/, which is not committed).
 */
export function reportSection(markdown) {
  const lines = markdown.trimEnd().split('\n');
  const firstNotes = lines.findIndex((line) => line.startsWith('#### '));
  const head = (firstNotes === -1 ? lines : lines.slice(0, firstNotes)).join('\n').trimEnd();
  if (!head.startsWith('### ')) throw new Error('not a chaos report (it starts with "### <date>, commit …")');
  const violations = [];
  let scenario = '';
  for (const line of firstNotes === -1 ? [] : lines.slice(firstNotes)) {
    if (line.startsWith('#### ')) scenario = line.slice(5);
    else if (line.startsWith('- VIOLATION ')) violations.push(`- ${scenario}: ${line.slice('- VIOLATION '.length)}`);
  }
  return violations.length === 0 ? head : `${head}\n\nViolations:\n\n${violations.join('\n')}`;
}

/** A section's parts: heading, summary lines, table lines, and what follows the table. */
function partsOf(section) {
  const lines = section.split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  if (!lines[0]?.startsWith('### ') || first === -1)
    throw new Error('not a chaos report section (heading, summary, table)');
  let end = first;
  while (end < lines.length && lines[end]?.startsWith('|')) end += 1;
  const cells = (line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
  return {
    heading: lines[0].slice(4),
    summary: lines.slice(1, first).filter((line) => line.trim() !== ''),
    header: lines[first],
    separator: lines[first + 1],
    rows: lines.slice(first + 2, end).map(cells),
    rest: lines.slice(end).join('\n').trim(),
  };
}

/**
 * The passes of one run (direct, then every process through PgBouncer) as one section: the first
 * pass's heading, each pass's summary as a list item named by what its heading adds, and one table
 * whose cells give a value once where the passes agree and `a / b` (in pass order) where they
 * differ. One pass is its section as it is.
 */
export function runSection(sections) {
  if (sections.length <= 1) return sections[0] ?? '';
  const passes = sections.map(partsOf);
  const base = passes[0].heading;
  const profile = / profile [^,\s]+/.exec(base);
  const stem = profile ? base.slice(0, profile.index + profile[0].length) : base;
  const label = (pass, index) => {
    const at = / profile [^,\s]+/.exec(pass.heading);
    const extra = at
      ? pass.heading
          .slice(at.index + at[0].length)
          .replace(/^,\s*/, '')
          .trim()
      : pass.heading;
    const commit = / commit (\S+):/.exec(pass.heading)?.[1];
    const firstCommit = / commit (\S+):/.exec(base)?.[1];
    const name = extra || (index === 0 ? 'direct' : `pass ${index + 1}`);
    return commit && commit !== firstCommit ? `${name} (commit ${commit})` : name;
  };
  const scenarios = [...new Set(passes.flatMap((pass) => pass.rows.map((row) => row[0])))];
  const rows = scenarios.map((scenario) => {
    const found = passes.map((pass) => pass.rows.find((row) => row[0] === scenario));
    const width = Math.max(...found.map((row) => row?.length ?? 0));
    const cells = [scenario];
    for (let column = 1; column < width; column += 1) {
      const values = found.map((row) => row?.[column] ?? '—');
      cells.push(values.every((value) => value === values[0]) ? values[0] : values.join(' / '));
    }
    return `| ${cells.join(' | ')} |`;
  });
  const names = passes.map(label);
  const lines = [
    `### ${stem}: ${names.join(', then ')}`,
    '',
    ...passes.map((pass, index) => `- ${names[index]}: ${pass.summary.join(' ')}`),
    '',
    `One row per scenario; where the passes differ a cell gives each pass's value in that order (\`${names.map((_, index) => String.fromCharCode(97 + index)).join(' / ')}\`).`,
    '',
    passes[0].header,
    passes[0].separator,
    ...rows,
  ];
  passes.forEach((pass, index) => {
    if (pass.rest) lines.push('', `${names[index]}: ${pass.rest}`);
  });
  return lines.join('\n');
}

export function recordInto(text, sections) {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1 || to < from) throw new Error(`${doc} lacks the markers ${start} … ${end}`);
  return `${text.slice(0, from + start.length)}\n\n${sections.join('\n\n')}\n\n${text.slice(to)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error(
      'usage: node scripts/chaos-record.mjs test-output/chaos-<seed>.md [test-output/chaos-<seed>-pgbouncer.md]',
    );
    process.exit(2);
  }
  const sections = files.map((file) => reportSection(readFileSync(path.resolve(file), 'utf8')));
  writeFileSync(doc, recordInto(readFileSync(doc, 'utf8'), [runSection(sections)]));
  console.log(`[chaos] ${files.length} report(s) recorded in docs/reliability.md (Latest full run)`);
}
