// Shared by the root scripts. Uses only Node's standard library: it runs before dependencies exist.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pnpmVersion = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const stamp = path.join(root, 'node_modules', '.tally-install-stamp');

export function log(message) {
  process.stderr.write(`[tally] ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    log(`${command} ${args.join(' ')} failed`);
    process.exit(result.status ?? 1);
  }
}

/**
 * Installs dependencies with the pinned pnpm (fetched by npx, so a machine with only Node and npm
 * works) when node_modules is missing or older than the lockfile.
 */
export function ensureInstalled() {
  const lock = path.join(root, 'pnpm-lock.yaml');
  const fresh = existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(lock).mtimeMs;
  if (fresh) return;
  log(`installing dependencies with pnpm ${pnpmVersion}`);
  run('npx', ['--yes', `pnpm@${pnpmVersion}`, 'install', '--frozen-lockfile'], {
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  writeFileSync(stamp, new Date().toISOString());
}

/** Compiles the workspace (incremental: fast when nothing changed). */
export function ensureBuilt() {
  run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b']);
}

/**
 * The environment for root scripts: the process environment, plus `.env` if present. Without a
 * `.env`, the documented demo configuration in `.env.example` fills what is unset, except with
 * NODE_ENV=production: a production process never reads the demo file (its secrets are public),
 * so whatever the operator left unset stays unset (a provider off, a required key a start error).
 */
export function loadEnvironment() {
  const envFile = path.join(root, '.env');
  if (existsSync(envFile)) {
    process.loadEnvFile(envFile);
    return '.env';
  }
  // guard: env-example-not-in-production
  if (process.env.NODE_ENV === 'production') return 'nothing else (NODE_ENV=production never reads .env.example)';
  process.loadEnvFile(path.join(root, '.env.example'));
  return '.env.example (demo configuration)';
}
