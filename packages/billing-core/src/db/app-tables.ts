import type { ColumnType, Generated, Selectable } from 'kysely';
import type { DbTime, DbTimeNullable, InsertOnly } from './column-types';

// The other tables: studio requests, user aliases, migrations, leases, the email outbox,
// idempotency keys, the admin audit, app webhook messages (db/schema.ts gathers every table in DB).

export const studioRequestStatuses = ['received', 'processing', 'completed', 'failed'] as const;
export type StudioRequestStatus = (typeof studioRequestStatuses)[number];
export type StudioKind = 'image_edit' | 'music';

export interface StudioRequestsTable {
  /** Internal id: what the queue and the relay carry. */
  id: Generated<number>;
  /** Public id (uuid): what the API shows and ledger references use. */
  public_id: Generated<string>;
  user_id: string;
  kind: StudioKind;
  duration_seconds: number | null;
  full: ColumnType<boolean, boolean | undefined, boolean>;
  input: ColumnType<unknown, string, string>;
  price_tokens: number;
  tokens_charged: number;
  free_tier: boolean;
  /** UTC day (YYYY-MM-DD) whose free allowance the request used or skipped. */
  usage_day: ColumnType<string, string, string>;
  /** The allowance group the request counted against (migration 0036); NULL before: its kind. */
  allowance_group: ColumnType<string | null, string | null | undefined, string | null>;
  status: ColumnType<StudioRequestStatus, StudioRequestStatus | undefined, StudioRequestStatus>;
  result: ColumnType<unknown, string | null | undefined, string | null>;
  error_code: string | null;
  error: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  enqueued_at: DbTimeNullable;
  next_attempt_at: DbTimeNullable;
  completed_at: DbTimeNullable;
  failed_at: DbTimeNullable;
  refunded_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}

export interface SchemaMigrationsTable {
  version: string;
  checksum: string;
  applied_at: DbTime;
}

/** Every id seen for a customer points at the canonical Tally user (see docs/revenuecat.md). */
export interface UserAliasesTable {
  alias: string;
  user_id: string;
  inbox_event_id: number | null;
  created_at: DbTime;
}

/** Leases of work that spans transactions (migration 0016, db/run-with-lease.ts). */
export interface LeasesTable {
  name: string;
  holder: string;
  acquired_at: DbTime;
  expires_at: DbTime;
}

export type EmailStatus = 'pending' | 'processing' | 'sent' | 'skipped' | 'failed';

export interface EmailOutboxTable {
  id: Generated<number>;
  payment_id: number;
  user_id: string;
  to_address: string | null;
  subject: string;
  body: string;
  status: ColumnType<EmailStatus, EmailStatus | undefined, EmailStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  enqueued_at: DbTimeNullable;
  next_attempt_at: DbTimeNullable;
  sent_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}

export type EmailOutboxRow = Selectable<EmailOutboxTable>;

// Idempotency keys of the product API (migration 0013, docs/idempotency.md).
export const idempotencyRecoveryPoints = ['started', 'recharge_created', 'finished'] as const;
export type IdempotencyRecoveryPoint = (typeof idempotencyRecoveryPoints)[number];

export interface IdempotencyKeysTable {
  id: Generated<number>;
  /** The user id as the request's path named it (not resolved: a later link must not change the key). */
  user_id: string;
  idempotency_key: string;
  request_method: string;
  request_path: string;
  /** sha256 (hex) of the body as canonical JSON. */
  request_hash: string;
  recovery_point: ColumnType<IdempotencyRecoveryPoint, IdempotencyRecoveryPoint | undefined, IdempotencyRecoveryPoint>;
  topup_reference: string | null;
  /** Start of the lease of the request running the key (null: nobody runs it). */
  locked_at: DbTimeNullable;
  /** Which attempt holds the lease; every write of a request is fenced on it. */
  lock_token: string | null;
  response_status: number | null;
  /** The answer's JSON text as sent. */
  response_body: string | null;
  created_at: DbTime;
  updated_at: DbTime;
  finished_at: DbTimeNullable;
}

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
// Operators' actions (migration 0017): append-only, a trigger rejects updates and deletes.
export const adminSurfaces = ['api', 'console', 'dashboard', 'cli'] as const;
export type AdminSurface = (typeof adminSurfaces)[number];

export interface AdminAuditTable {
  id: Generated<number>;
  action: InsertOnly<string>;
  surface: InsertOnly<AdminSurface>;
  target_kind: InsertOnly<string | null>;
  target_id: InsertOnly<string | null>;
  method: InsertOnly<string | null>;
  path: InsertOnly<string | null>;
  request: ColumnType<unknown, string | null, never>;
  key_fingerprint: InsertOnly<string | null>;
  actor: InsertOnly<string | null>;
  status_code: InsertOnly<number | null>;
  outcome: InsertOnly<string>;
  answer: ColumnType<unknown, string | null, never>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type AdminAuditRow = Selectable<AdminAuditTable>;
// Outbound webhooks to the app (migration 0015, docs/app-webhooks.md).
export const appWebhookMessageTypes = [
  'wallet.credited',
  'wallet.debited',
  'wallet.balance_low',
  'subscription.updated',
  'studio.request.completed',
  'studio.request.failed',
  'wallet.credits_expiring',
  'wallet.credits_expired',
  'wallet.debt_changed',
  'wallet.auto_topup_failed',
  'wallet.auto_topup_disabled',
] as const;
export type AppWebhookMessageType = (typeof appWebhookMessageTypes)[number];
export const appWebhookMessageStatuses = ['pending', 'processing', 'delivered', 'failed'] as const;
export type AppWebhookMessageStatus = (typeof appWebhookMessageStatuses)[number];

export interface AppWebhookMessagesTable {
  id: Generated<number>;
  /** The `webhook-id` (shown as `msg_` + the uuid without dashes). */
  message_id: Generated<string>;
  user_id: string;
  type: AppWebhookMessageType;
  /** Set for wallet.credited / wallet.debited only: the entry announced (unique). */
  ledger_entry_id: number | null;
  /** The body's `data`; jsonb, read back parsed. */
  data: ColumnType<unknown, string, string>;
  status: ColumnType<AppWebhookMessageStatus, AppWebhookMessageStatus | undefined, AppWebhookMessageStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  last_status_code: number | null;
  last_error: string | null;
  enqueued_at: DbTimeNullable;
  next_attempt_at: DbTimeNullable;
  delivered_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}

export type AppWebhookMessageRow = Selectable<AppWebhookMessagesTable>;
