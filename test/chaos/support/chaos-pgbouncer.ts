import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../support/ports';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Debian's binary (`apt-get install pgbouncer`), or PGBOUNCER_PATH. */
function binary(): string {
  const file = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';
  if (!existsSync(file)) throw new Error(`${file} is missing: install PgBouncer or set PGBOUNCER_PATH`);
  return file;
}

/**
 * The chaos cluster's PgBouncer (transaction mode, every database passed through to one Postgres
 * server) on a port it keeps for the whole run, like a Service in front of the pooler's pods. It
 * can be killed and started again on the same port (`restart`), and pointed at another server
 * (`repoint`: the config rewritten, then SIGHUP, PgBouncer's RELOAD), which is how a failover
 * reaches the services without touching them: their DATABASE_URL names PgBouncer, never Postgres.
 */
export class ChaosPgBouncer {
  output = '';
  restarts = 0;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    readonly port: number,
    private upstreamPort: number,
  ) {}

  static async start(upstreamPort: number): Promise<ChaosPgBouncer> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-chaos-pgbouncer-'));
    // As root PgBouncer is told to drop to nobody, who must read its files.
    await chmod(dir, 0o755);
    await writeFile(path.join(dir, 'userlist.txt'), '"postgres" ""\n', { mode: 0o644 });
    const bouncer = new ChaosPgBouncer(dir, await freePort(), upstreamPort);
    await bouncer.writeConfig();
    await bouncer.spawn();
    return bouncer;
  }

  get upstream(): number {
    return this.upstreamPort;
  }

  /** `url` (a database on the upstream server) reached through PgBouncer. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  private get iniPath(): string {
    return path.join(this.dir, 'pgbouncer.ini');
  }

  private async writeConfig(): Promise<void> {
    const ini = [
      '[databases]',
      `* = host=127.0.0.1 port=${this.upstreamPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(this.dir, 'userlist.txt')}`,
      'admin_users = postgres',
      'pool_mode = transaction',
      // Below the upstream's max_connections (100) with room for the checker and replication.
      'default_pool_size = 40',
      'reserve_pool_size = 0',
      'max_client_conn = 2000',
      // A dead upstream is retried every second (default 15 s), and a client waits for a server
      // connection at most 10 s (default 120 s): past the failover, within the callers' timeouts.
      'server_login_retry = 1',
      'query_wait_timeout = 10',
      // Tally's pool sets idle_in_transaction_session_timeout at startup before main's per-
      // transaction SET LOCAL (scale branch); PgBouncer refuses unknown startup parameters.
      'ignore_startup_parameters = idle_in_transaction_session_timeout',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n');
    await writeFile(this.iniPath, ini, { mode: 0o644 });
  }

  private async spawn(): Promise<void> {
    const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    const child = spawn(binary(), [...asRoot, this.iniPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const append = (chunk: Buffer) => {
      this.output += chunk.toString();
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 10_000;
    let gone = false;
    void this.exited.then(() => {
      gone = true;
    });
    // The port is reused across restarts: wait until the old socket is released and the new
    // PgBouncer listens.
    while (Date.now() < deadline) {
      if (gone) {
        if (Date.now() + 500 > deadline) break;
        await sleep(200);
        return this.spawn();
      }
      if (await this.accepts()) return;
      await sleep(25);
    }
    throw new Error(`PgBouncer did not listen on ${this.port}:\n${this.output.slice(-2_000)}`);
  }

  private accepts(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: this.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }

  /** kill -9, `downMs` without a pooler, then a new PgBouncer on the same port. */
  async restart(downMs: number): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
    await sleep(downMs);
    this.restarts += 1;
    await this.spawn();
  }

  /** Points every database at another server: config rewritten, SIGHUP (RELOAD). */
  async repoint(upstreamPort: number): Promise<void> {
    this.upstreamPort = upstreamPort;
    await this.writeConfig();
    this.child?.kill('SIGHUP');
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await this.exited;
    await rm(this.dir, { recursive: true, force: true });
  }
}
