import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { createTestDatabase, type TestDatabase, testRedisUrl, uniqueQueuePrefix } from '@tally/billing-core/testing';
import { withTimeout } from '@tally/platform';
import { repoRoot } from '../../support/built-process';
import { freePort } from '../../support/ports';
import { eventually } from '../../support/stack';

/** True when something still listens on the port (on any address: Linux refuses 0.0.0.0 while 127.0.0.1 holds it). */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(true));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(false)));
  });
}

/** Every descendant of a process, found through `ps --ppid`, children before grandchildren. */
function descendantsOf(pid: number): number[] {
  let output = '';
  try {
    output = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none.
  }
  const children = output
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((child) => child > 0);
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/** True while the process exists and is not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' })
      .trim()
      .startsWith('Z');
  } catch {
    return false;
  }
}

/**
 * Processes started with this exact environment entry, wherever they were reparented: an
 * orphaned service has left the npm tree but still carries its stack's unique QUEUE_PREFIX.
 */
function processesWithEnv(entry: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry) && isAlive(pid)) found.push(pid);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

async function healthz(port: number): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

describe('npm start', () => {
  let database: TestDatabase;
  const started: ChildProcessWithoutNullStreams[] = [];
  const prefixes: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    // Only if a test failed: nothing of a stack may outlive the tests.
    for (const prefix of prefixes) {
      for (const pid of processesWithEnv(`QUEUE_PREFIX=${prefix}`)) process.kill(pid, 'SIGKILL');
    }
    for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
    await database.drop();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'announces the stack once every service answers /healthz, and stops completely, freeing its ports, on %s to its own PID',
    async (signal) => {
      const ports = {
        ingest: await freePort('0.0.0.0'),
        api: await freePort('0.0.0.0'),
        worker: await freePort('0.0.0.0'),
      };
      const prefix = uniqueQueuePrefix();
      prefixes.push(prefix);
      const npm = spawn('npm', ['start'], {
        cwd: repoRoot,
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          REDIS_URL: testRedisUrl(),
          QUEUE_PREFIX: prefix,
          INGEST_PORT: String(ports.ingest),
          API_PORT: String(ports.api),
          WORKER_METRICS_PORT: String(ports.worker),
          SHUTDOWN_TIMEOUT_MS: '20000',
          npm_config_update_notifier: 'false',
        },
      });
      started.push(npm);
      let output = '';
      npm.stdout.on('data', (chunk) => {
        output += chunk;
      });
      // The stack announces itself on stderr; check the services the moment it does.
      const announced = new Promise<Record<string, number>>((resolve) => {
        let stderr = '';
        let seen = false;
        npm.stderr.on('data', async (chunk) => {
          stderr += chunk;
          output += chunk;
          if (seen || !stderr.includes('stack running')) return;
          seen = true;
          resolve({
            ingest: await healthz(ports.ingest),
            api: await healthz(ports.api),
            worker: await healthz(ports.worker),
          });
        });
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        npm.on('exit', (code, exitSignal) => resolve({ code, signal: exitSignal })),
      );

      const atAnnouncement = await withTimeout(
        Promise.race([
          announced,
          exited.then((exit) => {
            throw new Error(`npm start exited early (${JSON.stringify(exit)}):\n${output}`);
          }),
        ]),
        120_000,
        'no "stack running" within 120 s',
      ).catch((error: Error) => {
        throw new Error(`${error.message}:\n${output}`);
      });
      expect(atAnnouncement).toEqual({ ingest: 200, api: 200, worker: 200 });

      const npmPid = npm.pid ?? 0;
      const tree = descendantsOf(npmPid);
      // npm → sh (exec'd into node) → stack.mjs → ingest, api, worker.
      expect(tree.length).toBeGreaterThanOrEqual(4);

      process.kill(npmPid, signal);
      const exit = await withTimeout(exited, 60_000, `npm start did not exit within 60 s of ${signal}`).catch(
        (error: Error) => {
          throw new Error(`${error.message}:\n${output}`);
        },
      );
      expect(exit).toEqual({ code: 0, signal: null });
      await eventually(`every process of the stack to be gone after ${signal}`, async () =>
        tree.every((pid) => !isAlive(pid)),
      );
      expect(processesWithEnv(`QUEUE_PREFIX=${prefix}`)).toEqual([]);
      for (const [name, port] of Object.entries(ports)) {
        expect({ name, inUse: await portInUse(port) }).toEqual({ name, inUse: false });
      }
      for (const name of ['ingest', 'api', 'worker']) expect(output).toContain(`"msg":"${name} stopped"`);
    },
    // About 6-8 s each on an idle machine (install check, tsc -b, migrate, three processes).
    240_000,
  );
});
