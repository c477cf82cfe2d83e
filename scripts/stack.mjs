// `pnpm start` / `npm start`: the whole stack in one terminal. Installs and builds when needed,
// creates the database and applies migrations, then runs ingest, api and worker with prefixed logs.
//
// Stopping: SIGINT (Ctrl-C), SIGTERM or SIGHUP stops every service and then this process. The
// package.json script `exec`s this file, so the signal npm forwards reaches it rather than an
// intermediate `sh`, which would die on SIGTERM (orphaning the stack) and ignore SIGINT. Each
// service runs in a process group of its own: the whole group gets SIGTERM, and SIGKILL if it has
// not exited by the deadline.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { ensureBuilt, ensureInstalled, loadEnvironment, log, root } from './bootstrap.mjs';
import { nodeFlags } from './node-flags.mjs';

ensureInstalled();
ensureBuilt();
log(`configuration from the environment and ${loadEnvironment()}`);

const migrate = spawnSync(process.execPath, [path.join(root, 'apps/cli/dist/main.js'), 'migrate'], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
if (migrate.status !== 0) {
  log('migrate failed; is Postgres running and DATABASE_MIGRATION_URL (default DATABASE_URL) right?');
  process.exit(migrate.status ?? 1);
}

// Ports and the shutdown budget as each service reads them: from its own (built) zod schema, the
// only place with their defaults. A value a schema refuses is reported by that service at start.
const require = createRequire(import.meta.url);
const settingOf = (app, schemaName, variable) => {
  const schema = require(path.join(root, `apps/${app}/dist/config.js`))[schemaName];
  const parsed = schema.shape[variable].safeParse(process.env[variable]);
  return parsed.success ? parsed.data : undefined;
};
/** Where /healthz is asked: the service's own interface, or the loopback for a wildcard one. */
const probeHost = (host) => {
  if (host === undefined || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
};
const serviceOf = (name, app, schemaName, portVariable, hostVariable) => {
  const host = settingOf(app, schemaName, hostVariable) ?? settingOf(app, schemaName, 'HOST');
  return { name, host, port: settingOf(app, schemaName, portVariable) };
};
const services = [
  serviceOf('ingest', 'ingest', 'ingestEnvSchema', 'INGEST_PORT', 'INGEST_HOST'),
  serviceOf('api', 'api', 'apiEnvSchema', 'API_PORT', 'API_HOST'),
  serviceOf('worker', 'worker', 'workerEnvSchema', 'WORKER_METRICS_PORT', 'WORKER_METRICS_HOST'),
];
// The services drain within SHUTDOWN_TIMEOUT_MS; give them that and a little more before SIGKILL.
const stopDeadlineMs = (settingOf('worker', 'workerEnvSchema', 'SHUTDOWN_TIMEOUT_MS') ?? 0) + 5_000;
const children = new Map();
let stopping = false;
let failed = false;

/** Signals a service's whole process group; false when it is already gone. */
function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

function stopAll(reason) {
  // Ctrl-C reaches this process twice (from the terminal, and forwarded by npm): one stop only.
  if (stopping) return;
  stopping = true;
  log(`${reason}: stopping ${[...children.keys()].join(', ') || 'nothing'}`);
  for (const child of children.values()) signalGroup(child, 'SIGTERM');
  setTimeout(() => {
    log(`${[...children.keys()].join(', ')} did not stop within ${stopDeadlineMs} ms; killing`);
    failed = true;
    for (const child of children.values()) signalGroup(child, 'SIGKILL');
  }, stopDeadlineMs).unref();
  if (children.size === 0) process.exit(failed ? 1 : 0);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stopAll(signal));

for (const { name } of services) {
  const flags = nodeFlags[name] ?? [];
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', ...flags, path.join(root, `apps/${name}/dist/main.js`)],
    {
      cwd: root,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own: this script decides when and how the services stop.
      detached: true,
    },
  );
  children.set(name, child);
  for (const stream of [child.stdout, child.stderr]) {
    readline
      .createInterface({ input: stream })
      .on('line', (line) => process.stdout.write(`${name.padEnd(6)} | ${line}\n`));
  }
  // Whatever the service left in its group goes with it (and stops holding its output pipes).
  child.on('exit', () => signalGroup(child, 'SIGKILL'));
  // 'close' comes after the exit and the last line of output.
  child.on('close', (code, signal) => {
    children.delete(name);
    if (code !== 0) failed = true;
    if (!stopping) {
      log(`${name} exited (${signal ?? code}); stopping the stack`);
      failed = true;
      stopAll(`${name} exited`);
    }
    if (children.size === 0) {
      if (stopping) log('stack stopped');
      process.exit(failed ? 1 : 0);
    }
  });
}

/** Polls each service's /healthz and announces the stack only once all of them answer. */
async function announceWhenHealthy() {
  const pending = new Set(services);
  const startedAt = Date.now();
  let warned = false;
  while (pending.size > 0 && !stopping) {
    for (const service of [...pending]) {
      try {
        const response = await fetch(`http://${probeHost(service.host)}:${service.port}/healthz`, {
          signal: AbortSignal.timeout(1_000),
        });
        await response.arrayBuffer();
        if (response.ok) pending.delete(service);
      } catch {
        // Not listening yet.
      }
    }
    if (pending.size === 0 || stopping) break;
    if (!warned && Date.now() - startedAt > 30_000) {
      warned = true;
      log(`still waiting for ${[...pending].map((service) => service.name).join(', ')} to answer /healthz`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (stopping) return;
  const at = (service) => `${service.host}:${service.port}`;
  log(
    `stack running: ingest ${at(services[0])}, api ${at(services[1])}, worker metrics ${at(services[2])} (Ctrl-C stops)`,
  );
}
void announceWhenHealthy();
