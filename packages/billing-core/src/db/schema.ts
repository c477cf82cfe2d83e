import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** Timestamps are written by the database clock and read back as Date. */
type DbTime = ColumnType<Date, Date | string | undefined, Date | string>;
type DbTimeNullable = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type Provider = 'stripe' | 'revenuecat';
export const inboxStatuses = ['received', 'processing', 'processed', 'failed', 'ignored'] as const;
export type InboxStatus = (typeof inboxStatuses)[number];

export interface InboxEventsTable {
  id: Generated<number>;
  provider: Provider;
  provider_event_id: string;
  type: string;
  livemode: boolean | null;
  environment: string | null;
  user_id: string | null;
  provider_customer_id: string | null;
  provider_subscription_id: string | null;
  provider_payment_intent_id: string | null;
  provider_invoice_id: string | null;
  raw_body: string;
  status: ColumnType<InboxStatus, InboxStatus | undefined, InboxStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  /** Stable machine code of the last outcome (see docs/outcomes.md); filterable. */
  outcome_code: string | null;
  /** Human detail of the last outcome. */
  outcome_detail: string | null;
  received_at: DbTime;
  enqueued_at: DbTimeNullable;
  /** The row is not attempted (nor re-enqueued by the relay) before this time. */
  next_attempt_at: DbTimeNullable;
  /** Start of the current "retry later" wait, which is bounded. */
  waiting_since: DbTimeNullable;
  deferrals: ColumnType<number, number | undefined, number>;
  replays: ColumnType<number, number | undefined, number>;
  replayed_at: DbTimeNullable;
  processed_at: DbTimeNullable;
  updated_at: DbTime;
}

export interface UsersTable {
  id: string;
  created_at: DbTime;
}

export interface WalletsTable {
  user_id: string;
  balance: ColumnType<number, number | undefined, number>;
  created_at: DbTime;
  updated_at: DbTime;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  user_id: string;
  reference: string;
  amount: number;
  balance_before: number;
  balance_after: number;
  reason: string;
  inbox_event_id: number | null;
  created_at: DbTime;
}

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

export interface DB {
  inbox_events: InboxEventsTable;
  users: UsersTable;
  wallets: WalletsTable;
  ledger_entries: LedgerEntriesTable;
  schema_migrations: SchemaMigrationsTable;
  studio_requests: StudioRequestsTable;
}

export type InboxEventRow = Selectable<InboxEventsTable>;
export type NewInboxEvent = Insertable<InboxEventsTable>;
export type LedgerEntryRow = Selectable<LedgerEntriesTable>;
export type WalletRow = Selectable<WalletsTable>;
export type StudioRequestRow = Selectable<StudioRequestsTable>;
