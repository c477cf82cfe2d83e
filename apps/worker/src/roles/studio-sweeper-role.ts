import { startStudioSweeperLoop } from '../loops/studio-sweeper-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `studio-sweeper`: fails and refunds studio requests stuck in processing (their worker died). */
export const studioSweeperRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start: ({ db, outbox, logger, settings }) =>
    loopHandle(startStudioSweeperLoop({ db, outbox, logger }, settings.studioSweeper)),
};
