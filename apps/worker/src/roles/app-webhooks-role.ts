import { appWebhookSource } from '@tally/billing-core';
import { createAppWebhookWorker } from '../processors/app-webhook-processor';
import { consumerHandle } from './stop-consumer';
import type { WorkerRoleDefinition } from './worker-role';

/**
 * `app-webhooks`: the consumer of app webhook messages (deliverAppWebhookMessage), signed with
 * Standard Webhooks; see docs/app-webhooks.md. Without a sender (APP_WEBHOOK_URL unset) it starts
 * nothing: messages are written but not delivered.
 */
export const appWebhooksRole: WorkerRoleDefinition = {
  metricFamilies: ['appWebhooks'],
  start(context) {
    const { db, logger, metrics, settings, ports, workerConnection, queuePrefix } = context;
    if (!ports.appWebhookSender) {
      logger.info('APP_WEBHOOK_URL is not set: app webhook messages are written but not delivered');
      return { stop: async () => undefined };
    }
    const { concurrency, retryScheduleMs } = settings.appWebhooks;
    const worker = createAppWebhookWorker(
      {
        db,
        sender: ports.appWebhookSender,
        retryScheduleMs,
        // The relay hands back messages stuck in processing after this long; the claim must take them.
        processingStaleAfterMs: settings.relay.processingStaleAfterMs,
        queue: context.producerQueue(appWebhookSource.queue),
        logger,
        metrics,
      },
      { connection: workerConnection, prefix: queuePrefix, concurrency, lockDurationMs: settings.lockDurationMs },
    );
    return consumerHandle(worker, settings.drainTimeoutMs, logger);
  },
};
