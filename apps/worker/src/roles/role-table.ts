import { appWebhooksRole } from './app-webhooks-role';
import { appleConsumptionRole } from './apple-consumption-role';
import { appleReconcileRole } from './apple-reconcile-role';
import { autoTopupRole } from './auto-topup-role';
import { creditExpiryRole } from './credit-expiry-role';
import { emailRole } from './email-role';
import { googlePlayConsumeRole, googlePlayVoidedRole } from './google-play-roles';
import { inboxRole } from './inbox-role';
import { installmentsRole } from './installments-role';
import { reconcileRole } from './reconcile-role';
import { relayRole } from './relay-role';
import { retentionRole } from './retention-role';
import { studioRole } from './studio-role';
import { studioSweeperRole } from './studio-sweeper-role';
import type { WorkerRoleDefinition } from './worker-role';

/**
 * Every role a worker process can run, by its WORKER_ROLES name, in start order. Adding a role
 * is one entry here and its module: the config accepts its name, `all` includes it unless it is
 * opt-in, and the runtime starts and stops it and registers its metric families.
 */
export const workerRoleTable = {
  inbox: inboxRole,
  relay: relayRole,
  studio: studioRole,
  'studio-sweeper': studioSweeperRole,
  installments: installmentsRole,
  'auto-topup': autoTopupRole,
  'apple-consumption': appleConsumptionRole,
  'google-play-consume': googlePlayConsumeRole,
  'google-play-voided': googlePlayVoidedRole,
  'credit-expiry': creditExpiryRole,
  email: emailRole,
  'app-webhooks': appWebhooksRole,
  retention: retentionRole,
  reconcile: reconcileRole,
  'apple-reconcile': appleReconcileRole,
} as const satisfies Record<string, WorkerRoleDefinition>;

export type WorkerRole = keyof typeof workerRoleTable;
