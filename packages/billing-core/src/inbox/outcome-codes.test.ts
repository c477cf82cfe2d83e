import { readFileSync } from 'node:fs';
import path from 'node:path';
import { legacyOutcomeCodes, outcomeCodes } from './outcome-codes';

/** Every `| status | `code` / `code` | meaning |` row of docs/outcomes.md, as code → status. */
function documentedCodes(): Map<string, string> {
  const page = readFileSync(path.join(__dirname, '../../../../docs/outcomes.md'), 'utf8');
  const documented = new Map<string, string>();
  for (const line of page.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    // ['', status, codes, meaning, '']
    if (cells.length < 5 || cells[1] === 'status' || cells[1]?.startsWith('---')) continue;
    for (const [, code] of (cells[2] ?? '').matchAll(/`([a-z0-9_]+)`/g)) {
      if (code) documented.set(code, cells[1] ?? '');
    }
  }
  return documented;
}

describe('docs/outcomes.md', () => {
  it('lists every outcome code under the status it is written with, and no code that does not exist', () => {
    const documented = documentedCodes();
    const defined = new Map<string, string>();
    for (const [status, codes] of Object.entries(outcomeCodes)) for (const code of codes) defined.set(code, status);

    const missing = [...defined.keys(), ...legacyOutcomeCodes].filter((code) => !documented.has(code));
    const unknown = [...documented.keys()].filter(
      (code) => !defined.has(code) && !(legacyOutcomeCodes as readonly string[]).includes(code),
    );
    const wrongStatus = [...defined].filter(([code, status]) => documented.get(code) !== status);
    expect({ missing, unknown, wrongStatus }).toEqual({ missing: [], unknown: [], wrongStatus: [] });
    // The page was read at all: it documents as many codes as there are.
    expect(documented.size).toBe(defined.size + legacyOutcomeCodes.length);
  });

  it('holds each code once, in lowercase snake case as the database checks', () => {
    const all = [...Object.values(outcomeCodes).flat(), ...legacyOutcomeCodes];
    expect(new Set(all).size).toBe(all.length);
    for (const code of all) expect(code).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
  });
});
