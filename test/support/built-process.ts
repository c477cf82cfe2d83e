import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { atNormalPriority } from './under-test-priority';

export const repoRoot = path.resolve(__dirname, '../..');

export type TallyApp = 'ingest' | 'api' | 'worker' | 'cli';

/** The compiled entry point of an app; `pnpm test` builds before Jest runs. */
export function builtMain(app: TallyApp): string {
  const main = path.join(repoRoot, 'apps', app, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run the tests through \`pnpm test\`, which builds first`);
  return main;
}

/**
 * A long-running built Tally process (ingest, api, worker) with exactly the given environment.
 * Keeps its output for assertions and failure messages, and remembers how it exited.
 */
export class RunningProcess {
  output = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcessWithoutNullStreams;

  /**
   * `viaRootScript`: started as an operator does, `node scripts/run.mjs <app>` (`pnpm start:<app>`)
   * from the repository root, so the root scripts' configuration loading (`.env`, `.env.example`) applies.
   */
  constructor(
    readonly app: TallyApp,
    env: Record<string, string>,
    options: {
      viaRootScript?: boolean;
      /**
       * The command line that runs the process instead of `node <main>` (the chaos suite's pods:
       * `ip netns exec <namespace> node <main>`, which execs, so the pid and signals stay the process's).
       */
      wrap?: (command: string, args: string[]) => [string, string[]];
    } = {},
  ) {
    const args = options.viaRootScript ? [path.join(repoRoot, 'scripts/run.mjs'), app] : [builtMain(app)];
    const [wrapped, wrappedArgs] = options.wrap ? options.wrap(process.execPath, args) : [process.execPath, args];
    const [command, commandArgs] = atNormalPriority(wrapped, wrappedArgs);
    this.child = spawn(command, commandArgs, {
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd: options.viaRootScript ? repoRoot : path.join(repoRoot, 'test'),
    });
    this.child.stdout.on('data', (chunk) => {
      this.output += chunk;
    });
    this.child.stderr.on('data', (chunk) => {
      this.output += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Waits for the log line `message` ("ingest listening", "worker started") and returns its fields. */
  async waitForLog(message: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of this.output.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (entry.msg === message) return entry;
        } catch {
          // A partial line: read it on the next pass.
        }
      }
      if (this.exit) throw new Error(`${this.app} exited (${JSON.stringify(this.exit)}):\n${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`${this.app} did not log "${message}":\n${this.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The last lines of output, for failure messages. */
  tail(lines = 30): string {
    return this.output.split('\n').slice(-lines).join('\n');
  }

  /** Sends a signal (SIGKILL plays a crash, SIGTERM a deploy) without waiting. */
  signal(signal: NodeJS.Signals): void {
    if (!this.exit) this.child.kill(signal);
  }

  /** Sends SIGTERM (once) and waits for the exit. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.exit) this.child.kill('SIGTERM');
    return this.exited;
  }
}

/** Runs the built CLI to completion with exactly the given environment. */
export function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(...atNormalPriority(process.execPath, [builtMain('cli'), ...args]), {
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd: path.join(repoRoot, 'test'),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    // 'close', not 'exit': every byte of output has been read by then.
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
