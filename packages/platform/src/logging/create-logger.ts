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

export function createLogger(options: { name: string; level: string }): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    base: { service: options.name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export type { Logger };
