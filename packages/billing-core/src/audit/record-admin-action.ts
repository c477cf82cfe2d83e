import type { Kysely } from 'kysely';
import type { AdminSurface, DB } from '../db/schema';

/** One operator's action and its answer, as `admin_audit` keeps it. */
export interface AdminActionRecord {
  /** An `adminActions` name, or "METHOD /route/:pattern" for an unnamed HTTP action. */
  action: string;
  surface: AdminSurface;
  target?: { kind: string; id: string } | null;
  method?: string | null;
  path?: string | null;
  /** Route parameters and body; stored size-capped. */
  request?: unknown;
  /** `keyFingerprint(key)`: never the key itself. */
  keyFingerprint?: string | null;
  actor?: string | null;
  statusCode?: number | null;
  /** 'ok' or the error code answered. */
  outcome: string;
  /** The answer's body; stored size-capped. */
  answer?: unknown;
}

/**
 * The outcome of the row an action that spans more than one transaction (a reconciliation, a
 * queue dashboard action) writes before it runs: the action runs only once this row is committed,
 * and a second row follows with its answer. A `started` row with no answer after it is an action
 * whose process died, or whose answer row could not be written.
 */
export const AUDIT_STARTED_OUTCOME = 'started';

/** The most characters of JSON a request or answer keeps; larger ones keep their scalars and array sizes. */
export const AUDIT_JSON_MAX_CHARS = 4_000;

/**
 * Appends one row to `admin_audit` (append-only: a trigger rejects updates and deletes) and
 * returns its id. Not idempotent: each call is one action. Throws when the database refuses.
 */
export async function recordAdminAction(db: Kysely<DB>, record: AdminActionRecord): Promise<number> {
  const row = await db
    .insertInto('admin_audit')
    .values({
      action: record.action.slice(0, 300),
      surface: record.surface,
      target_kind: record.target?.kind ?? null,
      target_id: record.target?.id ?? null,
      method: record.method ?? null,
      path: record.path ?? null,
      request: toCappedJson(record.request),
      key_fingerprint: record.keyFingerprint ?? null,
      actor: record.actor?.slice(0, 200) ?? null,
      status_code: record.statusCode ?? null,
      outcome: record.outcome.slice(0, 100),
      answer: toCappedJson(record.answer),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * JSON text of a value, at most AUDIT_JSON_MAX_CHARS: a larger object keeps its scalar fields and
 * the length of each array (`ids` of 5,000 requeued events becomes `idsCount: 5000` plus the first
 * ten), so the row stays small and still says what happened.
 */
export function toCappedJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = JSON.stringify(value);
  if (text === undefined) return null;
  if (text.length <= AUDIT_JSON_MAX_CHARS) return text;
  if (typeof value !== 'object' || Array.isArray(value)) return JSON.stringify({ truncated: true, chars: text.length });
  const summary: Record<string, unknown> = { truncated: true };
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (Array.isArray(field)) {
      summary[`${key}Count`] = field.length;
      summary[key] = field.slice(0, 10).filter((item) => typeof item !== 'object');
    } else if (field === null || typeof field !== 'object') {
      summary[key] = typeof field === 'string' ? field.slice(0, 500) : field;
    }
  }
  const capped = JSON.stringify(summary);
  return capped.length <= AUDIT_JSON_MAX_CHARS ? capped : JSON.stringify({ truncated: true, chars: text.length });
}
