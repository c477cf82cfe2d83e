import { startRetentionLoop } from '../loops/retention-loop';
import { loopHandle } from './loop-handle';
import type { WorkerRoleDefinition } from './worker-role';

/**
 * `retention`: prunes the raw bodies of finished inbox events past INBOX_RAW_BODY_RETENTION_DAYS,
 * and delivered app webhook messages past APP_WEBHOOK_RETENTION_DAYS (without APP_WEBHOOK_URL,
 * nothing will deliver the others, so undelivered ones go after the same time).
 */
export const retentionRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start: ({ db, logger, settings, ports }) =>
    loopHandle(
      startRetentionLoop(
        { db, logger },
        {
          ...settings.retention,
          appWebhooks: {
            // guard: retention-days-setting
            retentionDays: settings.appWebhooks.retentionDays,
            undelivered: ports.appWebhookSender === undefined,
          },
        },
      ),
    ),
};
