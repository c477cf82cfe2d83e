import type { Kysely } from 'kysely';
import { readKeysetPage } from '../db/keyset-page';
import type { AdminSurface, DB } from '../db/schema';

/** How an audit row is shown (`GET /admin/audit`, the console). */
export interface AdminActionView {
  id: number;
  action: string;
  surface: AdminSurface;
  target: { kind: string; id: string } | null;
  method: string | null;
  path: string | null;
  request: unknown;
  keyFingerprint: string | null;
  actor: string | null;
  statusCode: number | null;
  outcome: string;
  answer: unknown;
  createdAt: Date;
}

/**
 * Audit rows newest first, `limit` at a time; `beforeId` continues after the last one shown
 * (keyset paging on the primary key). Filtered by target when one is given.
 */
export async function listAdminActions(
  db: Kysely<DB>,
  filter: { limit: number; beforeId?: number | undefined; target?: { kind: string; id: string } | undefined },
): Promise<{ actions: AdminActionView[]; nextCursor: number | null }> {
  let query = db.selectFrom('admin_audit').selectAll();
  if (filter.target) {
    query = query.where('target_kind', '=', filter.target.kind).where('target_id', '=', filter.target.id);
  }
  const { page, next } = await readKeysetPage(query, filter);
  return {
    actions: page.map((row) => ({
      id: row.id,
      action: row.action,
      surface: row.surface,
      target: row.target_kind !== null && row.target_id !== null ? { kind: row.target_kind, id: row.target_id } : null,
      method: row.method,
      path: row.path,
      request: row.request,
      keyFingerprint: row.key_fingerprint,
      actor: row.actor,
      statusCode: row.status_code,
      outcome: row.outcome,
      answer: row.answer,
      createdAt: row.created_at,
    })),
    nextCursor: next?.id ?? null,
  };
}
