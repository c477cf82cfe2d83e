import { startRetentionLoop } from '../loops/retention-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/** `retention`: prunes the raw bodies of finished inbox events past INBOX_RAW_BODY_RETENTION_DAYS. */
export const retentionRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start: ({ db, logger, settings }) => loopHandle(startRetentionLoop({ db, logger }, settings.retention)),
};
