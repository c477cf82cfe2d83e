import { startInstallmentsLoop } from '../loops/installments-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `installments`: grants the due installments of annual plans. */
export const installmentsRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start: ({ db, outbox, logger, settings }) =>
    loopHandle(startInstallmentsLoop({ db, outbox, logger }, settings.installments)),
};
