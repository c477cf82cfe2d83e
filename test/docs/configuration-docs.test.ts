import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { baseEnvSchema } from '@tally/platform';
import { apiEnvSchema } from '../../apps/api/src/config';
import { eventsEnvSchema } from '../../apps/cli/src/commands/hand-off-once';
import { limitsEnvSchema } from '../../apps/cli/src/commands/limits';
import { migrateEnvSchema } from '../../apps/cli/src/commands/migrate';
import { reconcileEnvSchema } from '../../apps/cli/src/commands/reconcile';
import { appleReconcileEnvSchema } from '../../apps/cli/src/commands/reconcile-apple';
import { sampleEnvSchema } from '../../apps/cli/src/commands/send-sample';
import { ingestEnvSchema } from '../../apps/ingest/src/config';
import { workerEnvSchema } from '../../apps/worker/src/config';

const root = path.resolve(__dirname, '../..');
const configurationPage = path.join(root, 'docs/configuration.md');

/**
 * Every zod schema a process parses its environment with, by the name the docs' "read by" column
 * uses. The keys come from the schema objects themselves; the scan below makes sure no process
 * parses a schema this list does not know.
 */
const databaseOnly = baseEnvSchema.pick({ DATABASE_URL: true });
const schemasByReader: Record<string, Record<string, object>> = {
  ingest: { ingestEnvSchema },
  api: { apiEnvSchema },
  worker: { workerEnvSchema },
  cli: {
    eventsEnvSchema,
    limitsEnvSchema,
    reconcileEnvSchema,
    appleReconcileEnvSchema,
    sampleEnvSchema,
    migrateEnvSchema,
    'baseEnvSchema.pick({ DATABASE_URL: true })': databaseOnly,
  },
};

interface Field {
  safeParse(value: unknown): { success: boolean; data?: unknown };
}

/** A zod object schema's fields (`.shape`, kept through zod 4's refine and superRefine). */
function fieldsOf(name: string, schema: object): [string, Field][] {
  const shape: unknown = 'shape' in schema ? schema.shape : undefined;
  if (typeof shape !== 'object' || shape === null) {
    throw new Error(`${name} is not a zod object schema; read its keys another way`);
  }
  return Object.entries(shape as Record<string, Field>);
}

const keysOf = (name: string, schema: object) => fieldsOf(name, schema).map(([key]) => key);

/** Every (reader, variable, field) the schemas hold. */
const everyField = () =>
  Object.entries(schemasByReader).flatMap(([reader, schemas]) =>
    Object.entries(schemas).flatMap(([name, schema]) =>
      fieldsOf(name, schema).map(([key, field]) => ({ reader, key, field })),
    ),
  );

/** variable → the readers whose schemas read it. */
function variablesReadBySchemas(): Map<string, Set<string>> {
  const read = new Map<string, Set<string>>();
  for (const [reader, schemas] of Object.entries(schemasByReader)) {
    for (const [name, schema] of Object.entries(schemas)) {
      for (const key of keysOf(name, schema)) {
        if (!read.has(key)) read.set(key, new Set());
        read.get(key)?.add(reader);
      }
    }
  }
  return read;
}

interface Table {
  line: number;
  header: string[];
  rows: { line: number; cells: string[] }[];
}

const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());

/**
 * The page's tables. A run of `|` lines is one table only when it starts with a header and a
 * `| --- |` separator: rows after a blank line inside a table (which Markdown renders as a stray
 * paragraph) are reported as a split table.
 */
function tablesOf(markdown: string): { tables: Table[]; problems: string[] } {
  const lines = markdown.split('\n');
  const tables: Table[] = [];
  const problems: string[] = [];
  let inFence = false;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    if (line.trimStart().startsWith('```')) inFence = !inFence;
    if (inFence || !line.trimStart().startsWith('|')) continue;
    const block: { line: number; text: string }[] = [];
    while (index < lines.length && (lines[index] ?? '').trimStart().startsWith('|')) {
      block.push({ line: index + 1, text: lines[index] ?? '' });
      index += 1;
    }
    const [header, separator, ...rows] = block;
    if (!header || !separator || !/^\|?\s*:?-{3,}/.test(separator.text.trim())) {
      problems.push(`line ${block[0]?.line}: table rows without a header and separator (a blank line splits a table?)`);
      continue;
    }
    tables.push({
      line: header.line,
      header: cellsOf(header.text),
      rows: rows.map((row) => ({ line: row.line, cells: cellsOf(row.text) })),
    });
  }
  return { tables, problems };
}

/** variable → the readers the configuration page says read it. */
function variablesDocumented(): {
  documented: Map<string, Set<string>>;
  defaults: Map<string, string>;
  problems: string[];
} {
  const { tables, problems } = tablesOf(readFileSync(configurationPage, 'utf8'));
  const documented = new Map<string, Set<string>>();
  const defaults = new Map<string, string>();
  const variableTables = tables.filter((table) => table.header[0] === 'variable');
  if (variableTables.length !== 1) problems.push(`expected one variable table, found ${variableTables.length}`);
  for (const table of variableTables) {
    const readByColumn = table.header.indexOf('read by');
    if (readByColumn < 0) problems.push(`line ${table.line}: the variable table has no "read by" column`);
    for (const row of table.rows) {
      if (row.cells.length !== table.header.length) {
        problems.push(`line ${row.line}: ${row.cells.length} cells, the header has ${table.header.length}`);
      }
      const names = [...(row.cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] ?? '');
      if (names.length === 0) problems.push(`line ${row.line}: no variable in the first column`);
      const readers = new Set(
        (row.cells[readByColumn] ?? '')
          .split(',')
          .map((reader) => reader.trim())
          .filter(Boolean),
      );
      for (const name of names) {
        if (documented.has(name)) problems.push(`line ${row.line}: ${name} is documented twice`);
        documented.set(name, readers);
        defaults.set(name, row.cells[table.header.indexOf('default')] ?? '');
      }
    }
  }
  return { documented, defaults, problems };
}

describe('docs/configuration.md documents exactly what the config schemas read', () => {
  it('lists every variable a schema reads, with the processes that read it', () => {
    const read = variablesReadBySchemas();
    const { documented, problems } = variablesDocumented();
    expect(problems).toEqual([]);
    const missing = [...read.keys()].filter((name) => !documented.has(name)).sort();
    expect(missing).toEqual([]);
    const wrongReaders = [...read]
      .filter(([name]) => documented.has(name))
      .map(([name, readers]) => ({
        name,
        readBy: [...readers].sort().join(', '),
        documented: [...(documented.get(name) ?? [])].sort().join(', '),
      }))
      .filter((entry) => entry.readBy !== entry.documented);
    expect(wrongReaders).toEqual([]);
  });

  it('documents no variable that no schema reads', () => {
    const read = variablesReadBySchemas();
    const { documented } = variablesDocumented();
    const readNowhere = [...documented.keys()].filter((name) => !read.has(name)).sort();
    expect(readNowhere).toEqual([]);
  });

  it("states each schema's default, and required where every schema requires it", () => {
    // The default cell's first `code` value must parse to what the schema gives for an unset
    // variable; an empty list is written "empty…", a variable no reader can go without "required".
    const { defaults } = variablesDocumented();
    const wrong: string[] = [];
    const fields = everyField();
    let compared = 0;
    for (const { reader, key, field } of fields) {
      const cell = defaults.get(key);
      const unset = field.safeParse(undefined);
      if (cell === undefined || !unset.success || unset.data === undefined) continue;
      if (Array.isArray(unset.data) && unset.data.length === 0) {
        if (!cell.startsWith('empty'))
          wrong.push(`${key} (${reader}): unset is an empty list; the page says "${cell}"`);
        continue;
      }
      compared += 1;
      const stated = /`([^`]*)`/.exec(cell)?.[1];
      const parsed = stated === undefined ? undefined : field.safeParse(stated);
      if (!parsed?.success || !isDeepStrictEqual(parsed.data, unset.data)) {
        wrong.push(`${key} (${reader}): unset is ${JSON.stringify(unset.data)}; the page says "${cell}"`);
      }
    }
    for (const [key, cell] of defaults) {
      const readers = fields.filter((entry) => entry.key === key);
      const required = readers.length > 0 && readers.every(({ field }) => !field.safeParse(undefined).success);
      if (required !== cell.startsWith('required')) {
        wrong.push(
          `${key}: ${required ? 'required by every reader' : 'not required by every reader'}; the page says "${cell}"`,
        );
      }
    }
    expect(wrong).toEqual([]);
    expect(compared).toBeGreaterThan(40);
  });

  it('knows every schema a process parses its environment with', () => {
    // Every parseEnv(...) call in the apps' and packages' sources must parse one of the schemas
    // above, so a new process or command cannot read variables this test does not see.
    const known = new Set(Object.values(schemasByReader).flatMap((schemas) => Object.keys(schemas)));
    const unknown: string[] = [];
    const sources = ['apps', 'packages'].flatMap((top) =>
      readdirSync(path.join(root, top), { recursive: true, encoding: 'utf8' })
        .filter(
          (file) =>
            !file.includes('node_modules') &&
            file.includes(`${path.sep}src${path.sep}`) &&
            /\.ts$/.test(file) &&
            !/\.test\.ts$/.test(file),
        )
        .map((file) => path.join(root, top, file)),
    );
    // A service hands its schema to runService, which parses with it (the call names the schema).
    const runServiceForwarding = path.join('packages', 'platform', 'src', 'lifecycle', 'run-main.ts');
    let calls = 0;
    for (const file of sources) {
      const source = readFileSync(file, 'utf8');
      for (const call of source.matchAll(/\b(parseEnv|runService)\(/g)) {
        if (call[1] === 'parseEnv' && path.relative(root, file) === runServiceForwarding) continue;
        calls += 1;
        const rest = source.slice(call.index);
        const schema = (
          call[1] === 'parseEnv'
            ? /^parseEnv\(([\s\S]*?),\s*process\.env\)/.exec(rest)
            : /^runService\('[^']*',\s*([\s\S]*?),\s*process\.env,/.exec(rest)
        )?.[1]?.trim();
        if (schema === undefined || !known.has(schema)) {
          unknown.push(`${path.relative(root, file)}: ${source.slice(call.index, call.index + 80)}`);
        }
      }
    }
    expect(unknown).toEqual([]);
    expect(calls).toBeGreaterThanOrEqual(Object.keys(schemasByReader).length);
  });

  it('finds a table split by a blank line', () => {
    const { problems } = tablesOf('| a | b |\n| --- | --- |\n| `X` | 1 |\n\n| `Y` | 2 |\n');
    expect(problems).toEqual(['line 5: table rows without a header and separator (a blank line splits a table?)']);
  });
});
