import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { databaseUrl, testDatabaseServerUrl, withAdminClient } from '../testing/test-database';
import { ensureDatabaseExists, MigrationChecksumError, migrate } from './migrate';

describe('migrate', () => {
  const name = `tally_test_migrate_${process.pid}_${Date.now().toString(36)}`;
  const url = databaseUrl(testDatabaseServerUrl(), name);
  let dir: string;

  beforeAll(async () => {
    // A folder of the application's kind: numbered plain-SQL files, and a file the runner ignores.
    dir = await mkdtemp(path.join(tmpdir(), 'tally-migrations-'));
    await writeFile(path.join(dir, '0001_first.sql'), 'CREATE TABLE first_table (id int PRIMARY KEY);\n');
    await writeFile(path.join(dir, '0002_second.sql'), 'ALTER TABLE first_table ADD COLUMN label text;\n');
    await writeFile(path.join(dir, 'README.md'), '# not a migration\n');
  });

  afterAll(() =>
    withAdminClient((admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`)),
  );

  it('creates a missing database, applies every migration once, and is a no-op the second time', async () => {
    expect(await ensureDatabaseExists(url)).toBe(true);
    expect(await ensureDatabaseExists(url)).toBe(false);
    const [first, concurrent] = await Promise.all([migrate(url, dir), migrate(url, dir)]);
    const applied = [...first.applied, ...concurrent.applied];
    expect(applied.sort()).toEqual(['0001_first', '0002_second']);
    const again = await migrate(url, dir);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(['0001_first', '0002_second']);
  });

  it('refuses to run when an applied migration file was edited', async () => {
    const edited = await mkdtemp(path.join(tmpdir(), 'tally-migrations-edited-'));
    await writeFile(path.join(edited, '0001_first.sql'), '-- edited\nSELECT 1;\n');
    await expect(migrate(url, edited)).rejects.toBeInstanceOf(MigrationChecksumError);
  });
});
