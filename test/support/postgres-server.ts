import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { atNormalPriority } from './under-test-priority';

const run = promisify(execFile);
const binDir = process.env.TEST_POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
// initdb and postgres refuse to run as root; tests often do (containers, CI).
const serverUser = 'postgres';

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Runs a Postgres binary, as the `postgres` user when the tests run as root. */
async function runServerCommand(binary: string, args: string[]): Promise<string> {
  const file = path.join(binDir, binary);
  const [command, commandArgs] = atNormalPriority(
    ...((isRoot() ? ['runuser', ['-u', serverUser, '--', file, ...args]] : [file, args]) as [string, string[]]),
  );
  try {
    const { stdout } = await run(command, commandArgs, { timeout: 60_000 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${binary} ${args.join(' ')} failed: ${stderr || stdout || String(error)}`);
  }
}

/**
 * A Postgres cluster of the test's own (initdb into a temporary directory, trust auth, a free
 * port on 127.0.0.1, its socket in that directory), which the test can stop (`immediate` plays a
 * crash or a failover) and start again. Never touches the shared server on 5432.
 */
export class DisposablePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  private static async newDir(): Promise<string> {
    if (!existsSync(path.join(binDir, 'initdb'))) {
      throw new Error(`no Postgres binaries in ${binDir}; set TEST_POSTGRES_BIN_DIR`);
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-pg-'));
    if (isRoot()) {
      const { stdout } = await run('id', ['-u', serverUser]);
      const { stdout: gid } = await run('id', ['-g', serverUser]);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    return dir;
  }

  static async start(): Promise<DisposablePostgres> {
    const server = new DisposablePostgres(await DisposablePostgres.newDir(), await freePort());
    try {
      await runServerCommand('initdb', ['-D', server.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
      // The chaos suite's pods (test/chaos/support/network.ts) reach this server, which listens on
      // 127.0.0.1 only, through a DNAT from their own 10.213.x.y addresses: trust them as initdb
      // trusts 127.0.0.1. Nothing else can arrive from those addresses.
      appendFileSync(path.join(server.dataDir, 'pg_hba.conf'), 'host all all 10.213.0.0/16 trust\n');
      await server.startServer();
    } catch (error) {
      await server.destroy();
      throw error;
    }
    return server;
  }

  /**
   * A streaming standby of `primary` (a cluster of its own: `pg_basebackup -R` from the running
   * primary, so it starts in recovery and follows it over a replication connection), started and
   * accepting read-only connections. initdb's trust pg_hba allows the replication connection.
   */
  static async standbyOf(primary: DisposablePostgres): Promise<DisposablePostgres> {
    const server = new DisposablePostgres(await DisposablePostgres.newDir(), await freePort());
    try {
      await runServerCommand('pg_basebackup', [
        ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
        ...['-D', server.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
      ]);
      await server.startServer();
    } catch (error) {
      await server.destroy();
      throw error;
    }
    return server;
  }

  /** The postmaster's pid (the first line of postmaster.pid), while the server runs. */
  get pid(): number | undefined {
    try {
      return Number(readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  }

  /**
   * SIGKILL to the postmaster and every process it started (backends, WAL sender, checkpointer):
   * the machine is gone, nothing is flushed or sent any more. The data directory stays as it was.
   */
  kill9(): void {
    const pid = this.pid;
    if (!pid) throw new Error('the server is not running');
    const children = (() => {
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
      } catch {
        return [];
      }
    })();
    process.kill(pid, 'SIGKILL');
    for (const child of children) {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(path.join(this.dataDir, 'postmaster.pid'), { force: true });
  }

  /** `pg_ctl promote -w`: a standby leaves recovery and accepts writes. */
  async promote(): Promise<void> {
    await runServerCommand('pg_ctl', ['promote', '-w', '-t', '30', '-D', this.dataDir]);
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** The server's log; tests attach it to a failure. */
  get logFile(): string {
    return path.join(this.dir, 'server.log');
  }

  /** A URL of a database on this server (`postgres` exists from the start). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server and waits until it accepts connections (after crash recovery, if any). */
  async startServer(): Promise<void> {
    // fsync off: the machine does not crash in these tests, only the server does, and the
    // operating system still holds every write it made.
    const options = `-k ${this.dir} -c listen_addresses=127.0.0.1 -p ${this.port} -c fsync=off -c max_connections=100`;
    await runServerCommand('pg_ctl', [
      'start',
      '-w',
      '-t',
      '30',
      '-D',
      this.dataDir,
      '-l',
      this.logFile,
      '-o',
      options,
    ]);
  }

  /**
   * Stops the server. `immediate` aborts every backend without a checkpoint, like a crash: clients
   * see their connections cut, and the next start runs crash recovery.
   */
  async stopServer(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await runServerCommand('pg_ctl', ['stop', '-w', '-t', '30', '-D', this.dataDir, '-m', mode]);
  }

  /** Stops the server if it runs and removes its directory. Safe to call twice. */
  async destroy(): Promise<void> {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await this.stopServer('immediate').catch(() => undefined);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
