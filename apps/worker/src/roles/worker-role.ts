import type {
  AiStudioService,
  AppleNotificationVerifier,
  AppStoreApi,
  AppWebhookOutbox,
  AppWebhookSender,
  Catalog,
  DB,
  GooglePlayApi,
  InboxHandlers,
  Mailer,
  StripeApi,
} from '@tally/billing-core';
import type { Logger, ProducerQueue, QueueDefinition } from '@tally/platform';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { PeriodicLoop } from '../loops/run-periodic';
import type { WorkerMetricFamily, WorkerMetrics } from '../metrics/worker-metrics';
import type { WorkerRuntimeSettings } from './worker-runtime-settings';

/** Clients built by the composition root; a role that needs one it lacks says so (or parks work). */
export interface WorkerPorts {
  /** Undefined: generations fail as not_configured and are refunded. */
  aiStudio: AiStudioService | undefined;
  /** Undefined: the reconcile role logs each tick that it cannot run. */
  stripe: StripeApi | undefined;
  /** Required by the email role. */
  mailer: Mailer | undefined;
  /**
   * The signed POST to APP_WEBHOOK_URL (docs/app-webhooks.md). Undefined (no URL): app webhook
   * messages are only written; nothing hands off, delivers or relays them, and retention prunes them.
   */
  appWebhookSender: AppWebhookSender | undefined;
  /** The App Store Server API; undefined: consumption requests wait (retried until configured or expired). */
  appStore: AppStoreApi | undefined;
  /** The App Store notification check ingest uses (APPLE_ROOT_CERTIFICATES…); undefined: apple-reconcile cannot run. */
  appleNotifications: AppleNotificationVerifier | undefined;
  /** The Play Developer API; undefined: Google Play's loops have nothing to do (docs/stores-google-play.md). */
  googlePlay: GooglePlayApi | undefined;
}

/** What every role starts from: the process's shared connections, settings and clients. */
export interface RoleContext {
  db: Kysely<DB>;
  /**
   * How this process's roles write app webhook messages: the low-balance threshold, and (with a
   * sender) the hand-off of each transaction's messages to the app-webhooks queue after its commit.
   */
  outbox: AppWebhookOutbox;
  /** Built by the composition root from ports (createInboxHandlers). */
  handlers: InboxHandlers;
  /** The catalog (CATALOG_PATH): what auto top-up's packs cost. */
  catalog: Catalog;
  logger: Logger;
  metrics: WorkerMetrics;
  settings: WorkerRuntimeSettings;
  ports: WorkerPorts;
  /** The blocking connection BullMQ consumers share. */
  workerConnection: Redis;
  queuePrefix: string;
  /** A producer handle on a catalog queue, one per queue per process, closed by the runtime. */
  producerQueue<Payload>(definition: QueueDefinition<Payload>): ProducerQueue<Payload>;
}

/** A started role: stop() ends it (a loop's tick finishes, a consumer drains within the timeout). */
export interface RoleHandle {
  stop(): Promise<void>;
  /** The role's scheduled loop, for tests and operators (runOnce). */
  loop?: PeriodicLoop;
  /** Reads the gauges this role exports; called before each metrics scrape. */
  refreshGauges?(): Promise<void>;
}

/**
 * One entry of the role table (role-table.ts): what a worker process runs for this name of
 * WORKER_ROLES. A role is safe on any number of replicas (claims are conditional updates or SKIP
 * LOCKED, effects are fenced by references).
 */
export interface WorkerRoleDefinition {
  start(context: RoleContext): RoleHandle;
  /** The metric families this role moves; a process registers those of its roles only. */
  metricFamilies: readonly WorkerMetricFamily[];
  /** Runs only when WORKER_ROLES names it: `all` (and the default) leaves it out. */
  optIn?: boolean;
}
