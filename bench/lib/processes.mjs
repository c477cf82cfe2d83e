// Child processes the bench starts and always stops: Tally's built apps and the baselines.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

const running = new Set();

/** A free TCP port on loopback (bound then released). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Peak resident set size (VmHWM) of a live process, in MB. */
export function peakRssMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+)\s+kB/.exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) a live process has used, in seconds (Linux /proc; clock ticks of 10 ms). */
export function cpuSeconds(pid) {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** User and system CPU seconds a live process has used, apart (NaN when it is gone). */
export function cpuTimes(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** CPU seconds of this process's exited and reaped children (e.g. a pgbench run), user + system. */
export function reapedChildrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * Starts `node script` with `env` (added to a minimal environment, so the developer's .env
 * cannot leak in). Output is kept (last 200 lines) and printed only if the process fails.
 */
export function startNode(name, script, env, args = [], nodeFlags = []) {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  const keep = (chunk) => {
    for (const line of chunk.toString().split('\n')) if (line) lines.push(line);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  const exit = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      running.delete(handle);
      resolve({ code, signal });
    }),
  );
  const handle = {
    name,
    pid: child.pid,
    output: () => lines.join('\n'),
    get exited() {
      return exited;
    },
    peakRssMb: () => peakRssMb(child.pid),
    cpuSeconds: () => cpuSeconds(child.pid),
    cpuTimes: () => cpuTimes(child.pid),
    async stop(timeoutMs = 15_000) {
      if (exited) return exit;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
    exit,
  };
  running.add(handle);
  return handle;
}

/** Polls `url` until it answers 200 or the child dies or the time runs out. */
export async function waitForHttp(handle, url, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (handle.exited) throw new Error(`${handle.name} exited during start-up:\n${handle.output()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${handle.name} did not answer ${url} in time:\n${handle.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Stops every child still running (bench end, failure or Ctrl-C). */
export async function stopAll() {
  await Promise.all([...running].map((handle) => handle.stop(5_000)));
}

/**
 * CPU seconds the whole machine has spent busy so far (every core; /proc/stat: user, nice,
 * system, irq, softirq, steal), to tell the run's share of a shared machine from everyone else's.
 */
export function machineBusyCpuSeconds() {
  try {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return Number.NaN;
  }
}
