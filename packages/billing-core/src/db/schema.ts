import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type {
  AutoTopupAttemptsTable,
  AutoTopupSettingsTable,
  SavedPaymentMethodsTable,
  StoreAccountsTable,
  StoreConsentsTable,
} from './account-tables';
import type {
  AdminAuditTable,
  AppWebhookMessagesTable,
  EmailOutboxTable,
  IdempotencyKeysTable,
  LeasesTable,
  SchemaMigrationsTable,
  StudioRequestsTable,
  UserAliasesTable,
} from './app-tables';
import type { AppleConsumptionRequestsTable, AppleRefundsTable } from './apple-tables';
import type { DbTime, DbTimeNullable } from './column-types';
import type { GooglePlayPurchasesTable, GooglePlayVoidedPurchasesTable } from './google-play-tables';
import type {
  CreditLotsTable,
  FeatureUsesTable,
  HoldLotsTable,
  HoldsTable,
  LedgerDrawsTable,
  LedgerEntriesTable,
  SpendDaysTable,
  SpendLimitsTable,
  UsersTable,
  WalletsTable,
} from './ledger-tables';
import type {
  PaymentsTable,
  RevenueCatPackTransactionsTable,
  StripeCustomersTable,
  StripeDisputesTable,
  StripeInstallmentsTable,
  StripeSubscriptionsTable,
  TakeBackShortfallsTable,
  TopupsTable,
} from './payment-tables';
import type { Provider } from './providers';

export * from './account-tables';
export * from './app-tables';
export * from './apple-tables';
export * from './google-play-tables';
export * from './ledger-tables';
export * from './payment-tables';
export * from './providers';

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
  spend_limits: SpendLimitsTable;
  spend_days: SpendDaysTable;
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
  saved_payment_methods: SavedPaymentMethodsTable;
  auto_topup_settings: AutoTopupSettingsTable;
  auto_topup_attempts: AutoTopupAttemptsTable;
  store_accounts: StoreAccountsTable;
  store_consents: StoreConsentsTable;
  apple_refunds: AppleRefundsTable;
  apple_consumption_requests: AppleConsumptionRequestsTable;
  google_play_purchases: GooglePlayPurchasesTable;
  google_play_voided_purchases: GooglePlayVoidedPurchasesTable;
  stripe_installments: StripeInstallmentsTable;
  email_outbox: EmailOutboxTable;
  idempotency_keys: IdempotencyKeysTable;
  app_webhook_messages: AppWebhookMessagesTable;
  leases: LeasesTable;
  admin_audit: AdminAuditTable;
}

export type InboxEventRow = Selectable<InboxEventsTable>;
export type NewInboxEvent = Insertable<InboxEventsTable>;
export type LedgerEntryRow = Selectable<LedgerEntriesTable>;
export type WalletRow = Selectable<WalletsTable>;
export type CreditLotRow = Selectable<CreditLotsTable>;
export type LedgerDrawRow = Selectable<LedgerDrawsTable>;
export type FeatureUseRow = Selectable<FeatureUsesTable>;
export type HoldRow = Selectable<HoldsTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type SubscriptionHistoryRow = Selectable<SubscriptionHistoryTable>;
export type StudioRequestRow = Selectable<StudioRequestsTable>;
