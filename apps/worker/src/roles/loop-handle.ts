import { type PeriodicLoop, runPeriodic, type SweepDeps } from '../loops/run-periodic';
import type { RoleHandle, WorkerRoleDefinition } from './worker-role';
import type { WorkerRuntimeSettings } from './worker-runtime-settings';

/** The handle of a role that is one scheduled loop. */
export function loopHandle(loop: PeriodicLoop): RoleHandle {
  return { loop, stop: () => loop.stop() };
}

/**
 * A role that is one sweep of due rows, run every intervalMs of its settings (runPeriodic): `pass`
 * works through unit-of-work transactions, so any number of replicas can run it.
 */
export function sweepRole<Options extends { intervalMs: number }>(
  name: string,
  settingsOf: (settings: WorkerRuntimeSettings) => Options,
  pass: (deps: SweepDeps, options: Options) => Promise<void>,
): WorkerRoleDefinition {
  return {
    metricFamilies: [],
    start: ({ db, outbox, logger, settings }) => {
      const options = settingsOf(settings);
      return loopHandle(runPeriodic(name, options.intervalMs, () => pass({ db, outbox, logger }, options), logger));
    },
  };
}
