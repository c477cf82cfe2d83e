import type { ColumnType, Selectable } from 'kysely';
import type { DbTime, DbTimeNullable } from './column-types';

// Auto top-up's tables (migration 0042, docs/auto-topup.md) and the stores' shared ones (0044,
// docs/stores.md); db/schema.ts gathers every table in DB.

/** The card `setup_intent.succeeded` saved for a user's off-session charges (the latest wins). */
export interface SavedPaymentMethodsTable {
  user_id: string;
  stripe_customer_id: string;
  payment_method_id: string;
  setup_intent_id: string;
  saved_at: DbTime;
}

export const autoTopupDisabledReasons = ['failures', 'operator'] as const;
export type AutoTopupDisabledReason = (typeof autoTopupDisabledReasons)[number];

export interface AutoTopupSettingsTable {
  user_id: string;
  pack_id: string;
  threshold: number;
  monthly_limit: number;
  enabled: boolean;
  failures_in_a_row: ColumnType<number, number | undefined, number>;
  disabled_reason: AutoTopupDisabledReason | null;
  created_at: DbTime;
  updated_at: DbTime;
}

export const autoTopupAttemptStatuses = ['pending', 'processing', 'succeeded', 'failed', 'canceled'] as const;
export type AutoTopupAttemptStatus = (typeof autoTopupAttemptStatuses)[number];

export interface AutoTopupAttemptsTable {
  id: string;
  user_id: string;
  pack_id: string;
  threshold: number;
  available_after: number;
  stripe_customer_id: string;
  payment_method_id: string;
  status: ColumnType<AutoTopupAttemptStatus, AutoTopupAttemptStatus | undefined, AutoTopupAttemptStatus>;
  tries: ColumnType<number, number | undefined, number>;
  first_tried_at: DbTimeNullable;
  next_attempt_at: DbTime;
  locked_until: DbTimeNullable;
  payment_intent_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  requires_action: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: DbTime;
  updated_at: DbTime;
  finished_at: DbTimeNullable;
}

export type SavedPaymentMethodRow = Selectable<SavedPaymentMethodsTable>;
export type AutoTopupSettingsRow = Selectable<AutoTopupSettingsTable>;
export type AutoTopupAttemptRow = Selectable<AutoTopupAttemptsTable>;

/** The ids a user's store purchases carry (migration 0044): made on the first read, never changed. */
export interface StoreAccountsTable {
  user_id: string;
  apple_app_account_token: ColumnType<string, string | undefined, never>;
  google_obfuscated_account_id: ColumnType<string, string | undefined, never>;
  created_at: DbTime;
}

/** Whether the user agreed that Tally sends Apple consumption data (the latest answer stands). */
export interface StoreConsentsTable {
  user_id: string;
  consented: boolean;
  updated_at: DbTime;
}
