import {
  type AppWebhookOutbox,
  appWebhookSource,
  type Catalog,
  type DB,
  type InboxHandlers,
} from '@tally/billing-core';
import {
  closeProducerQueues,
  createCommittedRowsHandOff,
  createProducerQueue,
  createRedisConnection,
  type Logger,
  type ProducerQueue,
  type QueueDefinition,
} from '@tally/platform';
import type { Kysely } from 'kysely';
import type { PeriodicLoop } from './loops/run-periodic';
import { createWorkerMetrics, type WorkerMetricFamily, type WorkerMetrics } from './metrics/worker-metrics';
import { type WorkerRole, workerRoleTable } from './roles/role-table';
import type { RoleHandle, WorkerPorts } from './roles/worker-role';
import type { WorkerRuntimeSettings } from './roles/worker-runtime-settings';

export interface WorkerRuntimeOptions {
  db: Kysely<DB>;
  /** Built by the composition root from ports (createInboxHandlers). */
  handlers: InboxHandlers;
  /** The catalog (CATALOG_PATH): what auto top-up's packs cost. */
  catalog: Catalog;
  logger: Logger;
  redisUrl: string;
  /** REDIS_COMMAND_TIMEOUT_MS of the producer connection (the relay's and sweepers' enqueues). */
  redisCommandTimeoutMs?: number;
  queuePrefix: string;
  /** Which consumers and loops this process runs (WORKER_ROLES). */
  roles: readonly WorkerRole[];
  /** From the config schema (workerSettingsFrom); nothing here has a default of its own. */
  settings: WorkerRuntimeSettings;
  ports: WorkerPorts;
}

export interface WorkerRuntime {
  /** The families of this process's roles only (workerMetricFamiliesOf); serve `metrics.registry`. */
  metrics: WorkerMetrics;
  /** The scheduled loop of each started role that has one (relay, studio-sweeper, installments, …). */
  loops: Partial<Record<WorkerRole, PeriodicLoop>>;
  /**
   * Refreshes the scrape-time gauges of this process's roles (the relay's `system` family: queue
   * depth, backlog, ledger, parked, studio, installments); called before each metrics scrape.
   */
  refreshGauges(): Promise<void>;
  pingRedis(): Promise<void>;
  /** Stops every role (loops finish their tick, consumers drain within the timeout), then closes connections. */
  stop(): Promise<void>;
}

/** The metric families a process with these roles exports: those its roles' table entries name. */
export function workerMetricFamiliesOf(roles: Iterable<WorkerRole>): WorkerMetricFamily[] {
  return [...new Set([...roles].flatMap((role) => workerRoleTable[role].metricFamilies))];
}

/**
 * Starts one worker process's share of the fleet: each role of `roles` from the role table, in
 * the table's order, on shared Redis connections. Registers the metric families of its roles only.
 */
export function startWorkerRuntime(options: WorkerRuntimeOptions): WorkerRuntime {
  // guard: worker-named-roles
  const roles = (Object.keys(workerRoleTable) as WorkerRole[]).filter((role) => options.roles.includes(role));
  const metrics = createWorkerMetrics(workerMetricFamiliesOf(roles));
  const workerConnection = createRedisConnection(options.redisUrl, 'worker');
  const producerConnection = createRedisConnection(options.redisUrl, 'producer', {
    commandTimeoutMs: options.redisCommandTimeoutMs,
  });
  const queues = new Map<string, ProducerQueue<unknown>>();
  const producerQueue = <Payload>(definition: QueueDefinition<Payload>): ProducerQueue<Payload> => {
    const existing =
      queues.get(definition.name) ?? createProducerQueue(producerConnection, options.queuePrefix, definition);
    queues.set(definition.name, existing as ProducerQueue<unknown>);
    return existing as ProducerQueue<Payload>;
  };
  // With a sender (APP_WEBHOOK_URL), every role hands the messages its transactions wrote to the
  // app-webhooks queue right after each commit, so they leave at once instead of at the relay's
  // next pass. Without one nothing consumes that queue: the messages are written and left alone.
  const appWebhookHandOff = options.ports.appWebhookSender
    ? createCommittedRowsHandOff({
        queue: producerQueue(appWebhookSource.queue),
        source: appWebhookSource,
        db: options.db,
        logger: options.logger,
      })
    : undefined;
  const outbox: AppWebhookOutbox = {
    lowBalanceThreshold: options.settings.appWebhooks.lowBalanceThreshold,
    handOff: appWebhookHandOff?.handOff,
    debtPolicy: options.settings.appWebhooks.debtPolicy,
  };
  const context = {
    db: options.db,
    outbox,
    handlers: options.handlers,
    catalog: options.catalog,
    logger: options.logger,
    metrics,
    settings: options.settings,
    ports: options.ports,
    workerConnection,
    queuePrefix: options.queuePrefix,
    producerQueue,
  };
  const handles = new Map<WorkerRole, RoleHandle>();
  const closeConnections = async () => {
    await appWebhookHandOff?.drain();
    await closeProducerQueues(queues.values());
    workerConnection.disconnect();
    producerConnection.disconnect();
  };
  const stopRoles = () => Promise.all([...handles.values()].map((handle) => handle.stop()));
  try {
    for (const role of roles) handles.set(role, workerRoleTable[role].start(context));
  } catch (error) {
    // A role that cannot start (the email role without a mailer) leaves nothing running behind it.
    void stopRoles().then(closeConnections);
    throw error;
  }
  const loops: Partial<Record<WorkerRole, PeriodicLoop>> = {};
  for (const [role, handle] of handles) if (handle.loop) loops[role] = handle.loop;

  return {
    metrics,
    loops,
    async refreshGauges() {
      for (const handle of handles.values()) await handle.refreshGauges?.();
    },
    async pingRedis() {
      await producerConnection.ping();
    },
    async stop() {
      await stopRoles();
      await closeConnections();
    },
  };
}
