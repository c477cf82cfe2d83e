import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@tally/platform';

/** pino's numeric levels, as they appear in a line. */
export const logLevels = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A real Tally logger (redaction included) whose lines are kept, parsed, for assertions. */
export function captureLogs(name = 'worker', level = 'info'): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: createLogger({ name, level, destination }), lines };
}
