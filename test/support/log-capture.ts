import { createLogger, type Logger } from '@tally/platform';
import { collectLogLines } from '@tally/platform/testing';

/** pino's numeric levels, as they appear in a line. */
export const logLevels = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A real Tally logger (redaction included) whose lines are kept, parsed, for assertions. */
export function captureLogs(name = 'worker', level = 'info'): { logger: Logger; lines: LogLine[] } {
  const { destination, lines } = collectLogLines<LogLine>();
  return { logger: createLogger({ name, level, destination }), lines };
}
