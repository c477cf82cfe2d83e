import type { DB } from '@tally/billing-core';
import type { Kysely } from 'kysely';

type AuditColumn = keyof DB['admin_audit'] & string;

/** What the audit assertions compare by default: who did what to which target, and how it ended. */
export const auditColumns = ['action', 'surface', 'target_kind', 'target_id', 'status_code', 'outcome'] as const;

/**
 * The admin audit rows of one action, or naming one of `targetIds`, in the order they were
 * written (`columns`: the default, or others).
 */
export function auditOf<Column extends AuditColumn = (typeof auditColumns)[number]>(
  db: Kysely<DB>,
  of: { action: string } | { targetIds: string[] },
  columns: readonly Column[] = auditColumns as readonly AuditColumn[] as readonly Column[],
) {
  const rows = db.selectFrom('admin_audit').select(columns).orderBy('id');
  return (
    'action' in of ? rows.where('action', '=', of.action) : rows.where('target_id', 'in', of.targetIds)
  ).execute();
}
