import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports';

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
}

/**
 * A private PgBouncer in transaction mode in front of one Postgres server, on a free port, with
 * every database name passed through (`* =`). What an operator scaling Tally runs; the test
 * suite points services at it to prove they keep no session state.
 */
export class PgBouncer {
  output = '';
  private exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly dir: string,
    private readonly upstream: URL,
    readonly poolSize: number,
  ) {
    child.stdout?.on('data', (chunk) => {
      this.output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      this.output += chunk;
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
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
      const port = await freePort();
      const ini = [
        '[databases]',
        `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${path.join(dir, 'userlist.txt')}`,
        `admin_users = ${user}`,
        'pool_mode = transaction',
        `default_pool_size = ${poolSize}`,
        'reserve_pool_size = 0',
        'max_client_conn = 2000',
        'log_connections = 0',
        'log_disconnections = 0',
        '',
      ].join('\n');
      const iniPath = path.join(dir, 'pgbouncer.ini');
      await writeFile(iniPath, ini, { mode: 0o644 });
      const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
      const child = spawn(pgBouncerBinary(), [...asRoot, iniPath], { stdio: ['ignore', 'pipe', 'pipe'] });
      const bouncer = new PgBouncer(child, port, dir, upstream, poolSize);
      if (await bouncer.listening()) return bouncer;
      await bouncer.stop();
      // Another process took the port between freePort and PgBouncer's bind: try another.
      if (attempt >= 5) throw new Error(`PgBouncer did not start:\n${bouncer.output}`);
    }
  }

  private async listening(): Promise<boolean> {
    const deadline = Date.now() + 10_000;
    let exited = false;
    void this.exited.then(() => {
      exited = true;
    });
    while (Date.now() < deadline && !exited) {
      const open = await new Promise<boolean>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port: this.port });
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (open && /listening on 127\.0\.0\.1/.test(this.output)) return true;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return false;
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
