import type { ColumnType, Generated, Selectable } from 'kysely';
import type { DbTime, DbTimeNullable } from './column-types';
import type { Provider } from './providers';

// The payments' tables: Stripe customers, payments, subscriptions, top-ups, installments,
// disputes, take-back shortfalls, RevenueCat pack transactions (db/schema.ts gathers every table in DB).

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
export type TakeBackSource =
  | 'stripe_refund'
  | 'stripe_dispute'
  | 'revenuecat_refund'
  | 'priced_capture'
  | 'apple_refund'
  | 'google_voided';

/** What take-backs could not take, and what failed generations' refunds settled of it (migration 0014). */
export interface TakeBackShortfallsTable {
  id: Generated<number>;
  user_id: string;
  source: TakeBackSource;
  source_id: string;
  take_back_reference: string;
  shortfall: number;
  recovered: ColumnType<number, number | undefined, number>;
  /** What support forgave of it (migration 0039; POST /admin/users/{userId}/debt/forgive). */
  forgiven: ColumnType<number, never, number>;
  last_ledger_entry_id: number;
  closed_at: DbTimeNullable;
  created_at: DbTime;
}

// Stripe (migration 0004).
export interface StripeCustomersTable {
  customer_id: string;
  user_id: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export type PaymentKind = 'token_pack' | 'topup' | 'subscription_invoice';
export type PaymentStatus = 'succeeded' | 'partially_refunded' | 'refunded';

/** Who took the money: every provider but RevenueCat (whose packs are its own rows). */
export type PaymentProvider = Exclude<Provider, 'revenuecat'>;

export interface PaymentsTable {
  id: Generated<number>;
  provider: ColumnType<PaymentProvider, PaymentProvider | undefined, PaymentProvider>;
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

export type PaymentRow = Selectable<PaymentsTable>;
export type StripeSubscriptionRow = Selectable<StripeSubscriptionsTable>;
export type TopupRow = Selectable<TopupsTable>;
export type StripeInstallmentRow = Selectable<StripeInstallmentsTable>;
