import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** Timestamps are written by the database clock and read back as Date. */
type DbTime = ColumnType<Date, Date | string | undefined, Date | string>;
type DbTimeNullable = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** The payment providers Tally takes events from (inbox_events.provider, subscriptions.source, …). */
export const providers = ['stripe', 'revenuecat'] as const;
export type Provider = (typeof providers)[number];
export const inboxStatuses = ['received', 'processing', 'processed', 'failed', 'ignored'] as const;
export type InboxStatus = (typeof inboxStatuses)[number];
/** The payment environments, for every provider (inbox_events.environment, PAYMENT_ENVIRONMENTS). */
export const paymentEnvironments = ['production', 'sandbox'] as const;
export type PaymentEnvironment = (typeof paymentEnvironments)[number];
/** The environments that move money when PAYMENT_ENVIRONMENTS is unset: production only (fail closed). */
export const defaultPaymentEnvironments = ['production'] as const satisfies readonly PaymentEnvironment[];

export interface InboxEventsTable {
  id: Generated<number>;
  provider: Provider;
  provider_event_id: string;
  type: string;
  livemode: boolean | null;
  /** Migration 0012: 'production' exactly when livemode is true; null when the event named none. */
  environment: PaymentEnvironment | null;
  user_id: string | null;
  provider_customer_id: string | null;
  provider_subscription_id: string | null;
  provider_payment_intent_id: string | null;
  provider_invoice_id: string | null;
  /** The body as received; null once retention pruned it (raw_body_pruned_at says when). */
  raw_body: string | null;
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
  /** 'webhook' (ingest) or 'backfill' (Stripe reconciliation); migration 0009. */
  source: ColumnType<InboxSource, InboxSource | undefined, InboxSource>;
  /** When retention removed the raw body (null: the body is there). */
  raw_body_pruned_at: DbTimeNullable;
}

export const inboxSources = ['webhook', 'backfill'] as const;
export type InboxSource = (typeof inboxSources)[number];

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

export const lotCategories = ['purchased', 'subscription', 'promotional'] as const;
export type LotCategory = (typeof lotCategories)[number];

/** A credit's tokens (docs/lots.md): the ledger reference that created it, what is left, when it expires. */
export interface CreditLotsTable {
  id: Generated<number>;
  user_id: string;
  category: LotCategory;
  source: string;
  amount: number;
  remaining: number;
  /** NULL: never expires. */
  expires_at: Date | null;
  /** Generated from category: promotional 0, subscription 1, purchased 2 (the draw order's second key). */
  draw_rank: Generated<number>;
  created_at: DbTime;
  /** The price's rolloverMax the lot was created with; 0: no rollover (migration 0028). */
  rollover_max: ColumnType<number, number | undefined, number>;
  /** When wallet.credits_expiring was written for the lot; NULL: not yet (migration 0028). */
  expiry_notice_at: DbTimeNullable;
  /** Since when the lot is voided (a standing state: tokens coming back to it are taken); NULL: not voided (migration 0034). */
  voided_at: DbTimeNullable;
  /** The void's entries so far: `lot:{id}:voided`, then `lot:{id}:voided:{n}` (migration 0034). */
  void_takes: ColumnType<number, number | undefined, number>;
  /** What of rollover_max the lot has carried into its rollover lot (migration 0034). */
  rolled_over: ColumnType<number, number | undefined, number>;
}

/** What one ledger entry drew from (a debit) or returned to (a give-back) one lot; amount > 0. */
export interface LedgerDrawsTable {
  ledger_entry_id: number;
  lot_id: number;
  amount: number;
  /** The draw's place among the entry's draws (0 first); NULL for draws written before migration 0034. */
  position: number | null;
}

/** One use of a priced catalog feature (migration 0036, docs/features.md). */
export interface FeatureUsesTable {
  id: Generated<number>;
  user_id: string;
  source: 'usage' | 'hold';
  reference: string;
  feature: string;
  variant: string | null;
  /** jsonb `{meter: quantity}`, read back parsed (features/feature-use-row.ts types it). */
  quantities: unknown;
  /** jsonb `{meter: price}`. */
  prices: unknown;
  per: number;
  price_version: string;
  cost: number;
  free_tier: boolean;
  allowance_group: string | null;
  allowance_period: string | null;
  given_back: ColumnType<boolean, boolean | undefined, boolean>;
  ledger_reference: string | null;
  answer_balance: number;
  answer_available: number;
  usage_day: ColumnType<string, string, string>;
  created_at: DbTime;
}

export const holdStatuses = ['held', 'captured', 'released'] as const;
/** The stored status; a `held` hold past expires_at is expired (docs/holds.md): no stored `expired`. */
export type HoldStatus = (typeof holdStatuses)[number];

/** Tokens reserved before work whose cost is known at the end (migration 0029, docs/holds.md). */
export interface HoldsTable {
  /** Public id: `hold_` + 24 hex characters. */
  id: string;
  user_id: string;
  /** The app's reference, unique per user. */
  reference: string;
  amount: number;
  reason: string;
  status: ColumnType<HoldStatus, HoldStatus | undefined, HoldStatus>;
  expires_at: DbTime;
  /** What the capture debited; NULL unless captured. */
  captured: number | null;
  /** What the capture or release freed; NULL while open (and for an expired hold). */
  released: number | null;
  /** The capture's ledger reference (`hold:{id}:capture`). */
  ledger_reference: string | null;
  /** The user's latest ledger entry id at placement (the shortfall rule's marker). */
  ledger_marker: number;
  /** The wallet's balance and available right after the capture or release (its answer, repeated). */
  answer_balance: number | null;
  answer_available: number | null;
  created_at: DbTime;
  /** When the hold ended (captured, released, or an expired hold settled); NULL while open. */
  settled_at: DbTimeNullable;
  /** Placed by a feature's estimate (docs/features.md): its use is in feature_uses (migration 0036). */
  priced: ColumnType<boolean, boolean | undefined, boolean>;
  /** A priced capture's cost past the hold, taken from what was available; NULL otherwise. */
  excess: number | null;
  /** What of that excess could not be taken (recorded as a shortfall, to be debt); NULL otherwise. */
  debt: number | null;
}

/** A lot a hold reserves, in the draw order at placement (position). */
export interface HoldLotsTable {
  hold_id: string;
  lot_id: number;
  position: number;
  amount: number;
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

export type SubscriptionSource = Provider;
export type SubscriptionStatus = 'active' | 'inactive';

export interface SubscriptionsTable {
  id: Generated<number>;
  user_id: string;
  source: SubscriptionSource;
  status: SubscriptionStatus;
  plan_id: string | null;
  product_id: string | null;
  /** Null while active: lifetime. */
  expires_at: DbTimeNullable;
  store: string | null;
  auto_renew: ColumnType<boolean, boolean | undefined, boolean>;
  billing_issue_detected_at: DbTimeNullable;
  provider_read_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}

export type SubscriptionChange = 'activated' | 'renewed' | 'plan_changed' | 'updated' | 'deactivated';

export interface SubscriptionHistoryTable {
  id: Generated<number>;
  user_id: string;
  source: SubscriptionSource;
  change: SubscriptionChange;
  from_status: SubscriptionStatus | null;
  to_status: SubscriptionStatus;
  from_plan_id: string | null;
  to_plan_id: string | null;
  from_product_id: string | null;
  to_product_id: string | null;
  from_expires_at: DbTimeNullable;
  to_expires_at: DbTimeNullable;
  from_store: string | null;
  to_store: string | null;
  from_auto_renew: boolean | null;
  to_auto_renew: boolean;
  cause: 'inbox_event' | 'on_demand_sync';
  inbox_event_id: number | null;
  request_id: string | null;
  provider_read_at: DbTimeNullable;
  created_at: DbTime;
}

export interface TokenRefundsTable {
  id: Generated<number>;
  provider: Provider;
  provider_refund_id: string;
  user_id: string;
  pack_id: string;
  credit_reference: string;
  tokens_credited: number;
  tokens_taken: number;
  shortfall: ColumnType<number, never, never>;
  inbox_event_id: number | null;
  created_at: DbTime;
}

/**
 * RevenueCat token packs credited, one row per store transaction (migrations 0014, 0025): the
 * fence that credits a store transaction once, whatever event ids name it; `verified` says
 * whether RevenueCat's REST read listed it (REVENUECAT_VERIFY_PURCHASES).
 */
export interface RevenueCatPackTransactionsTable {
  store_transaction_id: string;
  user_id: string;
  product_id: string;
  ledger_reference: string;
  inbox_event_id: number;
  verified: boolean;
  created_at: DbTime;
}

/** Stripe chargebacks: what a withdrawal took, and what its reinstatement gave back (migration 0014). */
export interface StripeDisputesTable {
  dispute_id: string;
  payment_id: number;
  user_id: string;
  charge_id: string | null;
  status: string;
  tokens_owed: number;
  tokens_taken: number;
  shortfall: ColumnType<number, never, never>;
  tokens_reinstated: ColumnType<number, number | undefined, number>;
  withdrawn_inbox_event_id: number | null;
  reinstated_inbox_event_id: number | null;
  withdrawn_at: DbTime;
  reinstated_at: DbTimeNullable;
}

/** What recorded a shortfall: a take-back, or a priced capture past what was available (migration 0036). */
export type TakeBackSource = 'stripe_refund' | 'stripe_dispute' | 'revenuecat_refund' | 'priced_capture';

/** What take-backs could not take, and what failed generations' refunds settled of it (migration 0014). */
export interface TakeBackShortfallsTable {
  id: Generated<number>;
  user_id: string;
  source: TakeBackSource;
  source_id: string;
  take_back_reference: string;
  shortfall: number;
  recovered: ColumnType<number, number | undefined, number>;
  last_ledger_entry_id: number;
  closed_at: DbTimeNullable;
  created_at: DbTime;
}

export interface DB {
  inbox_events: InboxEventsTable;
  users: UsersTable;
  wallets: WalletsTable;
  ledger_entries: LedgerEntriesTable;
  credit_lots: CreditLotsTable;
  feature_uses: FeatureUsesTable;
  ledger_draws: LedgerDrawsTable;
  holds: HoldsTable;
  hold_lots: HoldLotsTable;
  token_refunds: TokenRefundsTable;
  revenuecat_pack_transactions: RevenueCatPackTransactionsTable;
  stripe_disputes: StripeDisputesTable;
  take_back_shortfalls: TakeBackShortfallsTable;
  schema_migrations: SchemaMigrationsTable;
  user_aliases: UserAliasesTable;
  subscriptions: SubscriptionsTable;
  subscription_history: SubscriptionHistoryTable;
  studio_requests: StudioRequestsTable;
  stripe_customers: StripeCustomersTable;
  payments: PaymentsTable;
  stripe_subscriptions: StripeSubscriptionsTable;
  topups: TopupsTable;
  stripe_installments: StripeInstallmentsTable;
  email_outbox: EmailOutboxTable;
  idempotency_keys: IdempotencyKeysTable;
  app_webhook_messages: AppWebhookMessagesTable;
  leases: LeasesTable;
  admin_audit: AdminAuditTable;
}

/** Leases of work that spans transactions (migration 0016, db/run-with-lease.ts). */
export interface LeasesTable {
  name: string;
  holder: string;
  acquired_at: DbTime;
  expires_at: DbTime;
}

export type InboxEventRow = Selectable<InboxEventsTable>;
export type NewInboxEvent = Insertable<InboxEventsTable>;
export type LedgerEntryRow = Selectable<LedgerEntriesTable>;
export type WalletRow = Selectable<WalletsTable>;
export type CreditLotRow = Selectable<CreditLotsTable>;
export type LedgerDrawRow = Selectable<LedgerDrawsTable>;
export type HoldRow = Selectable<HoldsTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type SubscriptionHistoryRow = Selectable<SubscriptionHistoryTable>;
export type StudioRequestRow = Selectable<StudioRequestsTable>;

// Stripe (migration 0004).
export interface StripeCustomersTable {
  customer_id: string;
  user_id: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type PaymentKind = 'token_pack' | 'topup' | 'subscription_invoice';
export type PaymentStatus = 'succeeded' | 'partially_refunded' | 'refunded';

export interface PaymentsTable {
  id: Generated<number>;
  provider: ColumnType<'stripe', 'stripe' | undefined, 'stripe'>;
  provider_payment_id: string;
  user_id: string;
  kind: PaymentKind;
  product_id: string;
  amount_minor: number;
  currency: string;
  status: ColumnType<PaymentStatus, PaymentStatus | undefined, PaymentStatus>;
  ledger_reference: string;
  tokens_granted: number;
  tokens_refunded: ColumnType<number, number | undefined, number>;
  refund_shortfall: ColumnType<number, number | undefined, number>;
  refunded_at: DbTimeNullable;
  /** Cumulative money refunded so far (migration 0010). */
  amount_refunded_minor: ColumnType<number, number | undefined, number>;
  customer_email: string | null;
  inbox_event_id: number | null;
  created_at: DbTime;
  updated_at: DbTime;
}

export interface StripeSubscriptionsTable {
  subscription_id: string;
  user_id: string;
  customer_id: string | null;
  plan_id: string | null;
  price_id: string | null;
  billing_interval: 'month' | 'year' | null;
  status: string;
  current_period_end: DbTimeNullable;
  cancel_at_period_end: ColumnType<boolean, boolean | undefined, boolean>;
  canceled_at: DbTimeNullable;
  ended_at: DbTimeNullable;
  /** When the API read this state was started (migration 0011); the later read wins. */
  provider_read_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}

export interface TopupsTable {
  reference: string;
  user_id: string;
  pack_id: string;
  tokens: number;
  amount_minor: number;
  currency: string;
  payment_intent_id: string | null;
  status: ColumnType<'pending' | 'paid', 'pending' | 'paid' | undefined, 'pending' | 'paid'>;
  paid_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}

export type InstallmentStatus = 'scheduled' | 'processing' | 'granted' | 'void' | 'failed';

export interface StripeInstallmentsTable {
  id: Generated<number>;
  subscription_id: string;
  invoice_id: string;
  user_id: string;
  sequence: number;
  /** What granting it posts: its full share, scaled down by partial refunds of its invoice (migration 0024). */
  tokens: number;
  /** Its original full share, from which every partial refund scales `tokens` (migration 0024). */
  full_tokens: number;
  due_at: DbTime;
  status: ColumnType<InstallmentStatus, InstallmentStatus | undefined, InstallmentStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  granted_at: DbTimeNullable;
  /** The dispute that voided this installment (migration 0014); a reinstatement schedules it again. */
  voided_by_dispute_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the lot its grant creates expires; NULL never (migration 0027, docs/lots.md). */
  lot_expires_at: DbTimeNullable;
  /** The rolloverMax its lot is created with (migration 0028). */
  lot_rollover_max: ColumnType<number, number | undefined, number>;
  created_at: DbTime;
  updated_at: DbTime;
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

export type PaymentRow = Selectable<PaymentsTable>;
export type StripeSubscriptionRow = Selectable<StripeSubscriptionsTable>;
export type TopupRow = Selectable<TopupsTable>;
export type StripeInstallmentRow = Selectable<StripeInstallmentsTable>;
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

/** Never updated: every column is insert-only. */
type InsertOnly<T> = ColumnType<T, T, never>;

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
