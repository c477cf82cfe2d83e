import { appleConsumptionPass } from '../loops/apple-consumption-loop';
import { runPeriodic } from '../loops/run-periodic';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `apple-consumption`: answers the App Store's consumption requests the inbox recorded (docs/stores-apple.md). */
export const appleConsumptionRole: WorkerRoleDefinition = {
  metricFamilies: ['appleConsumption'],
  start({ db, logger, metrics, settings, ports }) {
    const options = settings.appleConsumption;
    const deps = { db, logger, metrics, appStore: ports.appStore };
    return loopHandle(
      runPeriodic('apple-consumption', options.intervalMs, () => appleConsumptionPass(deps, options), logger),
    );
  },
};
