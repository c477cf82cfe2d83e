import { userInfo } from 'node:os';
import { type AdminActionRecord, type DB, recordAdminAction } from '@tally/billing-core';
import type { Database } from '@tally/platform';

type CliRecord = Omit<AdminActionRecord, 'surface' | 'actor' | 'keyFingerprint' | 'method' | 'path' | 'statusCode'>;

/**
 * The audit row of one state-changing CLI command (surface 'cli'). The CLI holds no admin key (it
 * reaches the database directly), so the row has no key fingerprint; the actor is the OS user who
 * ran it. A command that is one transaction (requeue, replay, redeliver) writes it in that
 * transaction with `runAuditedAction`.
 */
export function cliAuditRecord(record: CliRecord): AdminActionRecord {
  return { ...record, surface: 'cli', actor: osUser() };
}

/**
 * Records a CLI command that spans more than a transaction (reconcile): a `started` row before it
 * acts (the command stops if that row cannot be written), then one with what it answered.
 */
export function auditCliAction(db: Database<DB>['db'], record: CliRecord): Promise<number> {
  return recordAdminAction(db, cliAuditRecord(record));
}

function osUser(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}
