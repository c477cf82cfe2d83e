import type { Logger } from 'pino';
import type { z } from 'zod';
import { ConfigError, loadDotEnv, parseEnv } from '../config/env';
import { createLogger } from '../logging/create-logger';

/**
 * Runs a process's main: a configuration error prints a readable list and exits 1; SIGTERM and
 * SIGINT call `stop`, which must finish within `shutdownTimeoutMs` or the process exits 1 anyway.
 */
export function runMain(
  name: string,
  start: () => Promise<{ logger: Logger; stop: () => Promise<void>; shutdownTimeoutMs: number }>,
): void {
  start().then(
    ({ logger, stop, shutdownTimeoutMs }) => {
      let stopping = false;
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, `${name} stopping`);
        const deadline = setTimeout(() => {
          logger.error({ shutdownTimeoutMs }, `${name} did not stop in time; exiting`);
          process.exit(1);
        }, shutdownTimeoutMs);
        deadline.unref();
        stop().then(
          () => {
            logger.info(`${name} stopped`);
            process.exit(0);
          },
          (error: unknown) => {
            logger.error({ err: error }, `${name} failed to stop cleanly`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
    },
    (error: unknown) => {
      if (error instanceof ConfigError || (error as { code?: string } | null)?.code === 'invalid_catalog') {
        process.stderr.write(`${name}: ${(error as Error).message}\n`);
      } else {
        process.stderr.write(`${name}: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
      }
      process.exit(1);
    },
  );
}

/**
 * Runs a service's main (runMain) from its environment: `.env` loaded, `env` parsed with the
 * service's schema (every problem listed in one ConfigError), and its logger made at LOG_LEVEL,
 * before `start` builds the rest.
 */
export function runService<Schema extends z.ZodType<{ LOG_LEVEL: string; SHUTDOWN_TIMEOUT_MS: number }>>(
  name: string,
  schema: Schema,
  env: NodeJS.ProcessEnv,
  start: (config: z.output<Schema>, logger: Logger) => Promise<{ stop: () => Promise<void> }>,
): void {
  runMain(name, async () => {
    loadDotEnv();
    const config = parseEnv(schema, env);
    const logger = createLogger({ name, level: config.LOG_LEVEL });
    const { stop } = await start(config, logger);
    return { logger, stop, shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS };
  });
}
