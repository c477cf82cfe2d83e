// `pnpm start:ingest|start:api|start:worker|migrate|tally|bench`: install and build if needed, then run one process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ensureBuilt, ensureInstalled, loadEnvironment, log, root } from './bootstrap.mjs';
import { nodeFlags } from './node-flags.mjs';

const entries = {
  ingest: ['apps/ingest/dist/main.js'],
  api: ['apps/api/dist/main.js'],
  worker: ['apps/worker/dist/main.js'],
  migrate: ['apps/cli/dist/main.js', 'migrate'],
  cli: ['apps/cli/dist/main.js'],
  bench: ['bench/run.mjs'],
};

const [name, ...extra] = process.argv.slice(2);
const entry = entries[name];
if (!entry) {
  log(`unknown process ${name}; one of ${Object.keys(entries).join(', ')}`);
  process.exit(2);
}
ensureInstalled();
ensureBuilt();
log(`configuration from the environment and ${loadEnvironment()}`);
const [script, ...args] = entry;
const flags = nodeFlags[name] ?? [];
const child = spawn(process.execPath, ['--enable-source-maps', ...flags, path.join(root, script), ...args, ...extra], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
