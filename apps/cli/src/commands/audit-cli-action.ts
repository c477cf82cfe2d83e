import { userInfo } from 'node:os';
import { type AdminActionRecord, type Database, recordAdminAction } from '@tally/billing-core';

/**
 * Records one state-changing CLI command in `admin_audit` (surface 'cli'). The CLI holds no admin
 * key (it reaches the database directly), so the row has no key fingerprint; the actor is the OS
 * user who ran it. Called once the command has acted, with what it answered.
 */
export function auditCliAction(
  db: Database['db'],
  record: Omit<AdminActionRecord, 'surface' | 'actor' | 'keyFingerprint' | 'method' | 'path' | 'statusCode'>,
): Promise<number> {
  return recordAdminAction(db, { ...record, surface: 'cli', actor: osUser() });
}

function osUser(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}
