import { createStudioWorker } from '../processors/studio-processor';
import { consumerHandle } from './stop-consumer';
import type { WorkerRoleDefinition } from './worker-role';

/** `studio`: the consumer of the AI Studio queue (processStudioRequest); see docs/studio.md. */
export const studioRole: WorkerRoleDefinition = {
  metricFamilies: [],
  start({ db, outbox, logger, settings, ports, workerConnection, queuePrefix }) {
    const { concurrency, maxAttempts, backoff } = settings.studio;
    const worker = createStudioWorker(
      { db, outbox, aiStudio: ports.aiStudio, maxAttempts, backoff, logger },
      { connection: workerConnection, prefix: queuePrefix, concurrency, lockDurationMs: settings.lockDurationMs },
    );
    return consumerHandle(worker, settings.drainTimeoutMs, logger);
  },
};
