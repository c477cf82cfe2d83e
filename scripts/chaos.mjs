// `npm run test:chaos`: build, then the chaos suite (test/chaos) against Tally's built processes
// and a Postgres and a Redis of its own. CHAOS_PROFILE=short (default, CI) or full; CHAOS_SEED=<n>
// reproduces a run; CHAOS_SCENARIOS=a,b runs only those. Extra arguments go to Jest.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureBuilt, ensureInstalled, log, root } from './bootstrap.mjs';

ensureInstalled();
log('build (tsc -b)');
ensureBuilt();
log(`chaos suite (profile ${process.env.CHAOS_PROFILE ?? 'short'})`);
const jest = spawnSync(
  process.execPath,
  [
    path.join(root, 'node_modules/jest/bin/jest.js'),
    '-c',
    path.join(root, 'jest.chaos.config.js'),
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);
process.exit(jest.status ?? 1);
