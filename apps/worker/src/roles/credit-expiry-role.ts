import { startCreditExpiryLoop } from '../loops/credit-expiry-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `credit-expiry`: notices and expiries of credit lots, and their rollover (docs/lots.md). */
export const creditExpiryRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start: ({ db, outbox, logger, settings }) =>
    loopHandle(startCreditExpiryLoop({ db, outbox, logger }, settings.creditExpiry)),
};
