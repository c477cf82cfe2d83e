import pino, { type Logger } from 'pino';

/**
 * Paths that must never reach a log line: credentials, webhook signatures and bodies (which can
 * carry personal data). Applied to every logger Tally creates.
 */
export const redactedPaths = [
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers["stripe-signature"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["stripe-signature"]',
  'body',
  '*.body',
  'rawBody',
  '*.rawBody',
  'raw_body',
  '*.raw_body',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
];

/** A JSON logger with redaction; `destination` (default stdout) lets tests read its lines. */
export function createLogger(options: { name: string; level: string; destination?: pino.DestinationStream }): Logger {
  const settings = {
    name: options.name,
    level: options.level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    base: { service: options.name },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

export type { Logger };
