// `pnpm start` / `npm start`: the whole stack in one terminal. Installs and builds when needed,
// creates the database and applies migrations, then runs ingest, api and worker with prefixed logs.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { ensureBuilt, ensureInstalled, loadEnvironment, log, root } from './bootstrap.mjs';

ensureInstalled();
ensureBuilt();
log(`configuration from the environment and ${loadEnvironment()}`);

const migrate = spawnSync(process.execPath, [path.join(root, 'apps/cli/dist/main.js'), 'migrate'], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
if (migrate.status !== 0) {
  log('migrate failed; is Postgres running and DATABASE_URL right?');
  process.exit(migrate.status ?? 1);
}

const services = ['ingest', 'api', 'worker'];
const children = new Map();
let stopping = false;

function stopAll(signal = 'SIGTERM') {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill(signal);
}

for (const name of services) {
  const child = spawn(process.execPath, ['--enable-source-maps', path.join(root, `apps/${name}/dist/main.js`)], {
    cwd: root,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(name, child);
  for (const stream of [child.stdout, child.stderr]) {
    readline
      .createInterface({ input: stream })
      .on('line', (line) => process.stdout.write(`${name.padEnd(6)} | ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      log(`${name} exited (${signal ?? code}); stopping the stack`);
      process.exitCode = 1;
      stopAll();
    }
    if (children.size === 0) process.exit();
  });
}
log(
  `stack running: ingest :${process.env.INGEST_PORT ?? 3000}, api :${process.env.API_PORT ?? 3001}, worker metrics :${process.env.WORKER_METRICS_PORT ?? 9464} (Ctrl-C stops)`,
);
process.on('SIGINT', () => stopAll('SIGTERM'));
process.on('SIGTERM', () => stopAll('SIGTERM'));
