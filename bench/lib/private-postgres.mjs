// A Postgres cluster of the bench's own (initdb into a temporary directory, a free loopback port,
// trust auth), removed at the end. Two things the shared server cannot give: pg_stat_statements
// (shared_preload_libraries) and CPU time per event that survives a loaded machine, because every
// process of the cluster is ours: the postmaster's own CPU plus its reaped children's (backends
// that exited, e.g. pgbench's: Linux adds them to the parent's cutime/cstime) plus its live
// children's. WAL bytes come from the cluster's own LSN, which nothing else advances.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const binDirs = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin'];
const serverUser = 'postgres';

export function postgresBinDir() {
  return binDirs.find((dir) => existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) ?? null;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function run(binDir, binary, args) {
  const file = path.join(binDir, binary);
  const [command, commandArgs] = isRoot() ? ['runuser', ['-u', serverUser, '--', file, ...args]] : [file, args];
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${binary} failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

/** The process's CPU seconds from /proc: own (utime+stime) and, with `children`, reaped children's too. */
function procCpu(pid, children) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (children ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return 0;
  }
}

function childPids(parent) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

export class PrivatePostgres {
  constructor(binDir, dir, port) {
    this.binDir = binDir;
    this.dir = dir;
    this.port = port;
  }

  static async start(port) {
    const binDir = postgresBinDir();
    if (!binDir) throw new Error('no Postgres binaries (initdb, pg_ctl) found');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-bench-pg-'));
    if (isRoot()) {
      const uid = Number(execFileSync('id', ['-u', serverUser], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', serverUser], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    const server = new PrivatePostgres(binDir, dir, port);
    run(binDir, 'initdb', ['-D', server.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    // Durable like the shared server (fsync, synchronous_commit on, its 128 MB of shared buffers);
    // pg_stat_statements for the per-statement profile.
    const options = [
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      `-p ${port}`,
      '-c max_connections=200',
      '-c shared_buffers=128MB',
      '-c shared_preload_libraries=pg_stat_statements',
      '-c pg_stat_statements.track=all',
      '-c pg_stat_statements.track_planning=on',
      '-c pg_stat_statements.max=2000',
      '-c track_io_timing=off',
    ].join(' ');
    run(binDir, 'pg_ctl', ['start', '-w', '-t', '60', '-D', server.dataDir, '-l', server.logFile, '-o', options]);
    return server;
  }

  get dataDir() {
    return path.join(this.dir, 'data');
  }

  get logFile() {
    return path.join(this.dir, 'server.log');
  }

  get serverUrl() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  postmasterPid() {
    try {
      return Number(readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return null;
    }
  }

  /** CPU seconds every process of the cluster has used so far (exited backends included). */
  cpuSeconds() {
    const pid = this.postmasterPid();
    if (!pid) return Number.NaN;
    return procCpu(pid, true) + childPids(pid).reduce((sum, child) => sum + procCpu(child, false), 0);
  }

  async destroy() {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      try {
        run(this.binDir, 'pg_ctl', ['stop', '-w', '-t', '30', '-D', this.dataDir, '-m', 'immediate']);
      } catch {
        // already gone
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
