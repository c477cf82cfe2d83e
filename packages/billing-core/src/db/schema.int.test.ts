import path from 'node:path';
import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import ts from 'typescript';
import { createTestDatabase, type TestDatabase } from '../testing/test-services';

/**
 * schema.ts is written by hand; this test holds it to the migrated database. For every table of
 * the `public` schema and every table of `DB`, the columns must be the same, and each column's
 * select type (what Kysely returns, read from schema.ts with the TypeScript checker) must match
 * the column's Postgres type as createDb's parsers read it (int8/numeric → number, date → string)
 * and its nullability.
 */

type Family = 'string' | 'number' | 'boolean' | 'Date' | 'unknown';
interface ColumnShape {
  family: Family | string;
  nullable: boolean;
}
type Tables = Map<string, Map<string, ColumnShape>>;

/**
 * Columns Postgres reports nullable that can never hold null, declared non-null on purpose. A
 * generated column carries no NOT NULL of its own; this one is computed from two NOT NULL columns
 * (migration 0008). An entry that stops matching the database fails the test too.
 */
const neverNullInPractice: Record<string, string> = {
  'token_refunds.shortfall': 'GENERATED ALWAYS AS (tokens_credited - tokens_taken): both NOT NULL',
  'stripe_disputes.shortfall': 'GENERATED ALWAYS AS (tokens_owed - tokens_taken): both NOT NULL',
};

/** Postgres data types as the pg driver, with createDb's type parsers, hands them to Kysely. */
const familyOfPostgresType: Record<string, Family> = {
  bigint: 'number',
  integer: 'number',
  smallint: 'number',
  numeric: 'number',
  text: 'string',
  'character varying': 'string',
  character: 'string',
  uuid: 'string',
  date: 'string',
  boolean: 'boolean',
  'timestamp with time zone': 'Date',
  'timestamp without time zone': 'Date',
  jsonb: 'unknown',
  json: 'unknown',
};

async function migratedTables(database: TestDatabase): Promise<Tables> {
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>`
    SELECT c.table_name, c.column_name, c.data_type, c.is_nullable
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name, c.ordinal_position
  `.execute(database.db);
  const tables: Tables = new Map();
  for (const row of rows) {
    const columns = tables.get(row.table_name) ?? new Map<string, ColumnShape>();
    const known = `${row.table_name}.${row.column_name}` in neverNullInPractice;
    if (known && row.is_nullable !== 'YES')
      throw new Error(`${row.table_name}.${row.column_name} is NOT NULL now: drop it from neverNullInPractice`);
    columns.set(row.column_name, {
      family: familyOfPostgresType[row.data_type] ?? `postgres ${row.data_type}`,
      nullable: row.is_nullable === 'YES' && !known,
    });
    tables.set(row.table_name, columns);
  }
  return tables;
}

/** The select type of every column of every table of `DB`, from schema.ts (Selectable<DB[T]>). */
function declaredTables(schemaFile: string): Tables {
  const probeFile = path.join(path.dirname(schemaFile), '__schema_probe__.ts');
  const probe = [
    "import type { Selectable } from 'kysely';",
    "import type { DB } from './schema';",
    'export type Probe = { [T in keyof DB]: Selectable<DB[T]> };',
  ].join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => (file === probeFile ? probe : readFile(file));
  host.fileExists = (file) => file === probeFile || fileExists(file);
  host.getSourceFile = (file, language, onError) =>
    file === probeFile ? ts.createSourceFile(file, probe, language) : getSourceFile(file, language, onError);
  const program = ts.createProgram([probeFile], options, host);
  const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  if (problems.length > 0) throw new Error(`schema.ts does not typecheck:\n${problems.join('\n')}`);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(probeFile);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const probeSymbol = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'Probe');
  if (!probeSymbol) throw new Error('the probe type was not found');

  const shapeOf = (type: ts.Type): ColumnShape => {
    const members = type.isUnion() ? type.types : [type];
    const families = new Set<string>();
    let nullable = false;
    for (const member of members) {
      if (member.flags & ts.TypeFlags.Null) nullable = true;
      else if (member.flags & ts.TypeFlags.StringLike) families.add('string');
      else if (member.flags & ts.TypeFlags.NumberLike) families.add('number');
      else if (member.flags & ts.TypeFlags.BooleanLike) families.add('boolean');
      else if (member.flags & ts.TypeFlags.Unknown) families.add('unknown');
      else if (member.getSymbol()?.name === 'Date') families.add('Date');
      else families.add(`typescript ${checker.typeToString(member)}`);
    }
    return { family: [...families].sort().join(' | ') || 'never', nullable };
  };

  const tables: Tables = new Map();
  for (const table of checker.getDeclaredTypeOfSymbol(probeSymbol).getProperties()) {
    const columns = new Map<string, ColumnShape>();
    for (const column of checker.getTypeOfSymbol(table).getProperties()) {
      columns.set(column.name, shapeOf(checker.getTypeOfSymbol(column)));
    }
    tables.set(table.name, columns);
  }
  return tables;
}

/** Every difference, one line each: a table or column on one side only, or a column typed apart. */
function differences(declared: Tables, migrated: Tables): string[] {
  const found: string[] = [];
  // TypeScript's unknown (a JSON column) already includes null: its nullability cannot differ.
  const describe = (shape: ColumnShape) =>
    `${shape.family}${shape.nullable && shape.family !== 'unknown' ? ' | null' : ''}`;
  for (const table of new Set([...declared.keys(), ...migrated.keys()])) {
    const inSchema = declared.get(table);
    const inDatabase = migrated.get(table);
    if (!inSchema) {
      found.push(`table ${table}: in the database, missing from DB in schema.ts`);
      continue;
    }
    if (!inDatabase) {
      found.push(`table ${table}: in schema.ts, not in the migrated database`);
      continue;
    }
    for (const column of new Set([...inSchema.keys(), ...inDatabase.keys()])) {
      const ts = inSchema.get(column);
      const pg = inDatabase.get(column);
      if (!ts)
        found.push(`${table}.${column}: in the database (${describe(pg as ColumnShape)}), missing from schema.ts`);
      else if (!pg) found.push(`${table}.${column}: in schema.ts (${describe(ts)}), not in the database`);
      else if (describe(ts) !== describe(pg)) {
        found.push(`${table}.${column}: schema.ts says ${describe(ts)}, the database ${describe(pg)}`);
      }
    }
  }
  return found;
}

describe('db/schema.ts against the migrated database', () => {
  const database = useDatabase(createTestDatabase);

  it('declares every table and column the migrations create, with its type and nullability, and nothing else', async () => {
    const declared = declaredTables(path.join(__dirname, 'schema.ts'));
    const migrated = await migratedTables(database);
    expect(migrated.size).toBeGreaterThan(10);
    expect(differences(declared, migrated)).toEqual([]);
  });

  it('leaves no constraint NOT VALID once every migration ran (a live-safe CHECK is validated by a later one)', async () => {
    const unvalidated = await sql<{ table: string; constraint: string }>`
      SELECT conrelid::regclass::text AS table, conname AS constraint FROM pg_constraint
       WHERE connamespace = 'public'::regnamespace AND NOT convalidated ORDER BY 1, 2`.execute(database.db);
    expect(unvalidated.rows).toEqual([]);
  });

  it('reports a missing, an extra and a mistyped column', () => {
    // One table, `things`, its columns as [name, family, nullable].
    const things = (...columns: [string, string, boolean][]): Tables =>
      new Map([['things', new Map(columns.map(([name, family, nullable]) => [name, { family, nullable }]))]]);
    const migrated = things(['id', 'number', false], ['note', 'string', true], ['seen_at', 'Date', false]);
    const declared = things(['id', 'number', false], ['note', 'string', false], ['extra', 'string', false]);
    expect(differences(declared, migrated)).toEqual([
      'things.note: schema.ts says string, the database string | null',
      'things.extra: in schema.ts (string), not in the database',
      'things.seen_at: in the database (Date), missing from schema.ts',
    ]);
  });
});
