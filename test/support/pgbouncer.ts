import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports';
import { atNormalPriority } from './under-test-priority';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Debian's binary (`apt-get install pgbouncer`; .ci/run installs it), or PGBOUNCER_PATH. */
export function pgBouncerBinary(): string {
  const binary = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';
  if (!existsSync(binary)) {
    throw new Error(`${binary} is missing: install PgBouncer (apt-get install pgbouncer) or set PGBOUNCER_PATH`);
  }
  return binary;
}

export interface PgBouncerOptions {
  /** The Postgres server it pools (any database path; the user and password are reused). */
  upstreamUrl: string;
  /** Server connections per database and user: keep it below what the clients' pools add up to. */
  poolSize?: number;
  /** `server_login_retry`: seconds before a dead upstream is tried again (PgBouncer's default 15). */
  serverLoginRetrySeconds?: number;
  /** `query_wait_timeout`: seconds a client waits for a server connection (PgBouncer's default 120). */
  queryWaitTimeoutSeconds?: number;
}

/**
 * A private PgBouncer in transaction mode in front of one Postgres server, on a free port, with
 * every database name passed through (`* =`). What an operator scaling Tally runs; the test
 * suite points services at it to prove they keep no session state. It keeps its port for its
 * whole life, like a Service in front of the pooler's pods: `restart` kill -9s it and starts a new
 * one on the same port, and `repoint` sends every database to another server (the config
 * rewritten, then SIGHUP: PgBouncer's RELOAD), which is how a failover reaches the clients
 * without touching them (the chaos suite).
 */
export class PgBouncer {
  /** Every incarnation's output. */
  output = '';
  restarts = 0;
  private child!: ChildProcess;
  private exited: Promise<void> = Promise.resolve();
  private upstreamHost: string;
  private upstreamPort: number;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly upstream: URL,
    readonly poolSize: number,
    private readonly options: PgBouncerOptions,
  ) {
    this.upstreamHost = upstream.hostname;
    this.upstreamPort = Number(upstream.port || 5432);
  }

  static async start(options: PgBouncerOptions): Promise<PgBouncer> {
    const upstream = new URL(options.upstreamUrl);
    const poolSize = options.poolSize ?? 5;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-pgbouncer-'));
    // PgBouncer refuses to run as root; as root it is told to drop to nobody, who must read these.
    await chmod(dir, 0o755);
    const user = decodeURIComponent(upstream.username || 'postgres');
    const password = decodeURIComponent(upstream.password);
    const quoted = (value: string) => `"${value.replace(/"/g, '""')}"`;
    await writeFile(path.join(dir, 'userlist.txt'), `${quoted(user)} ${quoted(password)}\n`, { mode: 0o644 });
    for (let attempt = 1; ; attempt++) {
      const bouncer = new PgBouncer(await freePort(), dir, upstream, poolSize, options);
      await bouncer.writeConfig();
      if (await bouncer.spawn()) return bouncer;
      await bouncer.kill();
      // Another process took the port between freePort and PgBouncer's bind: try another.
      if (attempt >= 5) {
        await rm(dir, { recursive: true, force: true });
        throw new Error(`PgBouncer did not start:\n${bouncer.output}`);
      }
    }
  }

  private get iniPath(): string {
    return path.join(this.dir, 'pgbouncer.ini');
  }

  private async writeConfig(): Promise<void> {
    const user = decodeURIComponent(this.upstream.username || 'postgres');
    const ini = [
      '[databases]',
      `* = host=${this.upstreamHost} port=${this.upstreamPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(this.dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${this.poolSize}`,
      'reserve_pool_size = 0',
      'max_client_conn = 2000',
      ...(this.options.serverLoginRetrySeconds !== undefined
        ? [`server_login_retry = ${this.options.serverLoginRetrySeconds}`]
        : []),
      ...(this.options.queryWaitTimeoutSeconds !== undefined
        ? [`query_wait_timeout = ${this.options.queryWaitTimeoutSeconds}`]
        : []),
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n');
    await writeFile(this.iniPath, ini, { mode: 0o644 });
  }

  /** Starts an incarnation; true once it listens on the port (within 10 s), false if it exited or never did. */
  private async spawn(): Promise<boolean> {
    const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    const child = spawn(...atNormalPriority(pgBouncerBinary(), [...asRoot, this.iniPath]), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let own = '';
    const append = (chunk: Buffer) => {
      own += chunk.toString();
      this.output += chunk.toString();
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    let exited = false;
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        exited = true;
        resolve();
      }),
    );
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !exited) {
      if (/listening on 127\.0\.0\.1/.test(own) && (await this.accepts())) return true;
      await sleep(25);
    }
    return false;
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

  private async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** The upstream server's port (after `repoint`, the new one). */
  get upstreamServerPort(): number {
    return this.upstreamPort;
  }

  /**
   * kill -9 (every client connection and server connection cut at once), `downMs` without a
   * pooler, then a new PgBouncer on the same port (retried while the old socket is released).
   */
  async restart(downMs: number): Promise<void> {
    await this.kill();
    await sleep(downMs);
    this.restarts += 1;
    const deadline = Date.now() + 10_000;
    while (!(await this.spawn())) {
      await this.kill();
      if (Date.now() > deadline)
        throw new Error(`PgBouncer did not listen again on ${this.port}:\n${this.output.slice(-2_000)}`);
      await sleep(200);
    }
  }

  /** Points every database at another server on the same host: config rewritten, SIGHUP (RELOAD). */
  async repoint(upstreamPort: number): Promise<void> {
    this.upstreamPort = upstreamPort;
    await this.writeConfig();
    this.child.kill('SIGHUP');
  }

  /** `directUrl` (a database on the upstream server) reached through this PgBouncer instead. */
  urlFor(directUrl: string): string {
    const url = new URL(directUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** The upstream server's `postgres` database through this PgBouncer. */
  serverUrl(): string {
    const url = new URL(this.upstream.toString());
    url.pathname = '/postgres';
    return this.urlFor(url.toString());
  }

  /** Rows of an admin console command (`SHOW POOLS`, `SHOW STATS`); simple protocol only. */
  async show(command: 'POOLS' | 'STATS' | 'SERVERS' | 'CLIENTS'): Promise<Record<string, unknown>[]> {
    const url = new URL(this.serverUrl());
    url.pathname = '/pgbouncer';
    const client = new pg.Client({ connectionString: url.toString() });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(`SHOW ${command}`)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
    await rm(this.dir, { recursive: true, force: true });
  }
}
