import { createInboxWorker } from '../processors/inbox-processor';
import { consumerHandle } from './stop-consumer';
import type { WorkerRoleDefinition } from './worker-role';

/** `inbox`: the consumer of the inbox queue (processInboxEvents), the webhook engine. */
export const inboxRole: WorkerRoleDefinition = {
  metricFamilies: ['inbox'],
  start({ db, outbox, handlers, logger, metrics, settings, workerConnection, queuePrefix }) {
    const { concurrency, batch, ...retries } = settings.inbox;
    const worker = createInboxWorker(
      { db, outbox, handlers, ...retries, logger, metrics },
      {
        connection: workerConnection,
        prefix: queuePrefix,
        concurrency,
        lockDurationMs: settings.lockDurationMs,
        batch,
      },
    );
    return consumerHandle(worker, settings.drainTimeoutMs, logger);
  },
};
