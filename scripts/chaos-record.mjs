// `node scripts/chaos-record.mjs <report.md>…`: puts chaos reports (test-output/chaos-<seed>.md,
// and -pgbouncer.md for the run through PgBouncer) into docs/reliability.md as its "Latest full
// run", between the chaos:latest-full-run markers, replacing what was there. The tables, dates,
// commits and load averages come from the reports as the runs wrote them, with every violation;
// the notes stay in the reports. `CHAOS_RECORD=1 CHAOS_PROFILE=full npm run test:chaos` runs both passes and
// then this.
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
  writeFileSync(doc, recordInto(readFileSync(doc, 'utf8'), sections));
  console.log(`[chaos] ${files.length} report(s) recorded in docs/reliability.md (Latest full run)`);
}
