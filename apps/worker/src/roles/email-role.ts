import { createEmailWorker } from '../processors/email-processor';
import { consumerHandle } from './stop-consumer';
import type { WorkerRoleDefinition } from './worker-role';

/** `email`: the consumer of the email outbox (sendOutboxEmail); needs the mailer. */
export const emailRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start({ db, logger, settings, ports, workerConnection, queuePrefix }) {
    if (!ports.mailer) throw new Error('the email role needs a mailer');
    const { concurrency, maxAttempts, backoff } = settings.email;
    const worker = createEmailWorker(
      {
        db,
        mailer: ports.mailer,
        logger,
        maxAttempts,
        backoff,
        // The relay hands back rows stuck in processing after this long; the claim must take them.
        // guard: email-stale-window
        processingStaleAfterMs: settings.relay.processingStaleAfterMs,
      },
      { connection: workerConnection, prefix: queuePrefix, concurrency, lockDurationMs: settings.lockDurationMs },
    );
    return consumerHandle(worker, settings.drainTimeoutMs, logger);
  },
};
