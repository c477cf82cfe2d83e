import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

/** A logger destination that keeps every JSON line written to it, parsed, for assertions. */
export function collectLogLines<Line = Record<string, unknown>>(): { destination: Writable; lines: Line[] } {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Line);
      done();
    },
  });
  return { destination, lines };
}

/** A plain pino logger at `level` whose lines are kept, parsed (collectLogLines). */
export function capturePinoLines<Line = Record<string, unknown>>(level: string): { logger: Logger; lines: Line[] } {
  const { destination, lines } = collectLogLines<Line>();
  return { logger: pino({ level }, destination), lines };
}

/**
 * Runs `use` against the server `serve` starts with a plain pino logger at `level` whose lines are
 * kept (capturePinoLines), and closes the server after, whatever `use` did.
 */
export async function withLoggedServer<Server extends { close(): Promise<void> }>(
  level: string,
  serve: (logger: Logger) => Promise<Server>,
  use: (server: Server, lines: Record<string, unknown>[]) => Promise<void>,
): Promise<void> {
  const { logger, lines } = capturePinoLines(level);
  const server = await serve(logger);
  try {
    await use(server, lines);
  } finally {
    await server.close();
  }
}
