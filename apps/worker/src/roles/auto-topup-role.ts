import { autoTopupPass } from '../loops/auto-topup-loop';
import { runPeriodic } from '../loops/run-periodic';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `auto-topup`: charges the auto top-up attempts spends wrote (docs/auto-topup.md). */
export const autoTopupRole: WorkerRoleDefinition = {
  metricFamilies: ['autoTopup'],
  start({ db, outbox, logger, metrics, settings, ports, catalog }) {
    const options = settings.autoTopup;
    const deps = { db, outbox, logger, metrics, catalog, stripe: ports.stripe };
    return loopHandle(runPeriodic('auto-topup', options.intervalMs, () => autoTopupPass(deps, options), logger));
  },
};
