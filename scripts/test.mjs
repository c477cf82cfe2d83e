// `pnpm test` / `npm test`: install if needed, typecheck, lint, check every source tree's folders for
// import cycles, then every test against real Postgres and Redis (TEST_DATABASE_URL /
// TEST_REDIS_URL, else the local defaults, else testcontainers when Docker is available), then
// the end-to-end stack suites again behind a private PgBouncer in transaction mode
// (jest.pgbouncer.config.js; needs /usr/sbin/pgbouncer). Extra arguments go to both Jest runs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureBuilt, ensureInstalled, log, root } from './bootstrap.mjs';

ensureInstalled();
log("typecheck and build (tsc -b, then the tests' own tsconfig)");
ensureBuilt();
const typecheckTests = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'test/tsconfig.json')],
  { cwd: root, stdio: 'inherit' },
);
if (typecheckTests.status !== 0) process.exit(typecheckTests.status ?? 1);
log('lint (biome)');
const lint = spawnSync(process.execPath, [path.join(root, 'node_modules/@biomejs/biome/bin/biome'), 'check', '.'], {
  cwd: root,
  stdio: 'inherit',
});
if (lint.status !== 0) process.exit(lint.status ?? 1);
log('folder import cycles (scripts/check-folder-cycles.mjs)');
const folderCycles = spawnSync(process.execPath, [path.join(root, 'scripts/check-folder-cycles.mjs')], {
  cwd: root,
  stdio: 'inherit',
});
if (folderCycles.status !== 0) process.exit(folderCycles.status ?? 1);
log('every guard of the mutation check still found (MUTATIONS_DRY_RUN=1)');
const guards = spawnSync(process.execPath, [path.join(root, 'scripts/mutation-check.mjs')], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, MUTATIONS_DRY_RUN: '1' },
});
if (guards.status !== 0) process.exit(guards.status ?? 1);
log('tests (jest)');
const jestBin = path.join(root, 'node_modules/jest/bin/jest.js');
// The whole suite (no filter) must get an answer from every route the OpenAPI document describes
// (test/support/openapi-coverage.ts, checked in test/global-teardown.ts).
const wholeSuite = process.argv.length === 2;
const jest = spawnSync(process.execPath, [jestBin, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, ...(wholeSuite ? { TALLY_OPENAPI_COVERAGE: 'required' } : {}) },
});
if (jest.status !== 0) process.exit(jest.status ?? 1);
log('the stack suites again, every service behind PgBouncer in transaction mode (jest.pgbouncer.config.js)');
const pooled = spawnSync(
  process.execPath,
  [jestBin, '-c', path.join(root, 'jest.pgbouncer.config.js'), '--passWithNoTests', ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit', env: { ...process.env, TEST_VIA_PGBOUNCER: '1' } },
);
process.exit(pooled.status ?? 1);
