import type { UnitOfWorkDeps } from '@tally/billing-core';
import type { Logger } from '@tally/platform';

/** What a sweep of due rows works with: its unit-of-work transactions, and a logger. */
export type SweepDeps = UnitOfWorkDeps & { logger: Logger };

export interface PeriodicLoop {
  /** Runs one tick now (waiting for a running one first). For tests and operators. */
  runOnce(): Promise<void>;
  /** Stops scheduling and waits for the running tick. */
  stop(): Promise<void>;
}

/**
 * Runs `tick` every `intervalMs`, never two at once in this process (replicas coordinate through
 * the database: SKIP LOCKED claims). A failing tick is logged and the loop goes on.
 */
export function runPeriodic(name: string, intervalMs: number, tick: () => Promise<void>, logger: Logger): PeriodicLoop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const runOnce = (): Promise<void> => {
    running = running.then(async () => {
      try {
        await tick();
      } catch (error) {
        logger.error({ err: error, loop: name }, 'loop tick failed');
      }
    });
    return running;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void runOnce().then(schedule);
    }, intervalMs);
  };
  void runOnce().then(schedule);

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
