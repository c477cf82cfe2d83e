import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { freePort } from './ports';
import { atNormalPriority } from './under-test-priority';

/** Sends a raw PING and waits for +PONG; leaves no client or timer behind. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * A real redis-server of the test's own, on a free port, that the test can stop and start to
 * play an outage or a restart that loses every job (no persistence, like a flushed Redis).
 */
export class DisposableRedis {
  private process: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async start(): Promise<DisposableRedis> {
    const redis = new DisposableRedis(await freePort());
    await redis.startServer();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async startServer(): Promise<void> {
    this.process = spawn(
      ...atNormalPriority('redis-server', [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        // Listening on 127.0.0.1 only; the chaos suite's pods arrive from their own addresses
        // through a DNAT (test/chaos/support/network.ts), which protected mode would refuse.
        '--protected-mode',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
      ]),
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** True while the server process runs. */
  get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null;
  }

  /**
   * Freezes the server (SIGSTOP) without closing anything: connections stay open and every
   * command sent waits for an answer until `resume` (a hung Redis, not a down one).
   */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  async stopServer(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
    this.process = undefined;
  }
}
