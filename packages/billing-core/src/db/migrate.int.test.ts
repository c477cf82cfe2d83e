import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { testDatabaseServerUrl } from '../testing/test-services';
import { ensureDatabaseExists, MigrationChecksumError, migrate, migrationsDir } from './migrate';

describe('migrate', () => {
  const name = `tally_test_migrate_${process.pid}_${Date.now().toString(36)}`;
  const url = (() => {
    const parsed = new URL(testDatabaseServerUrl());
    parsed.pathname = `/${name}`;
    return parsed.toString();
  })();

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: testDatabaseServerUrl() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  });

  it('creates a missing database, applies every migration once, and is a no-op the second time', async () => {
    expect(await ensureDatabaseExists(url)).toBe(true);
    expect(await ensureDatabaseExists(url)).toBe(false);
    const [first, concurrent] = await Promise.all([migrate(url), migrate(url)]);
    const applied = [...first.applied, ...concurrent.applied];
    expect(applied).toContain('0001_inbox_wallets_ledger');
    expect(new Set(applied).size).toBe(applied.length);
    const again = await migrate(url);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toContain('0001_inbox_wallets_ledger');
  });

  it('refuses to run when an applied migration file was edited', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'tally-migrations-'));
    await cp(migrationsDir, dir, { recursive: true });
    await writeFile(path.join(dir, '0001_inbox_wallets_ledger.sql'), '-- edited\nSELECT 1;\n');
    await expect(migrate(url, dir)).rejects.toBeInstanceOf(MigrationChecksumError);
  });
});
