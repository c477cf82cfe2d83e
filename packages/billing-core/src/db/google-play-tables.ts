import type { ColumnType, Selectable } from 'kysely';
import type { DbTime, DbTimeNullable } from './column-types';

// Google Play's tables (migration 0048, docs/stores-google-play.md); db/schema.ts gathers every
// table in DB.

export const googlePlayConsumeStatuses = ['pending', 'consumed', 'voided'] as const;
export type GooglePlayConsumeStatus = (typeof googlePlayConsumeStatuses)[number];

/** A credited one-time product purchase and the durable consume that follows it after commit. */
export interface GooglePlayPurchasesTable {
  order_id: string;
  purchase_token: string;
  product_id: string;
  pack_id: string;
  user_id: string;
  quantity: number;
  tokens: number;
  ledger_reference: string;
  /** A PaymentEnvironment (schema.ts), spelled out here to keep the table files free of cycles. */
  environment: 'production' | 'sandbox';
  inbox_event_id: number | null;
  consume_status: ColumnType<GooglePlayConsumeStatus, GooglePlayConsumeStatus | undefined, GooglePlayConsumeStatus>;
  consume_tries: ColumnType<number, number | undefined, number>;
  consume_next_attempt_at: DbTime;
  consume_locked_until: DbTimeNullable;
  consume_last_error: string | null;
  consumed_at: DbTimeNullable;
  created_at: DbTime;
  updated_at: DbTime;
}
export type GooglePlayPurchaseRow = Selectable<GooglePlayPurchasesTable>;

export const googlePlayVoidSeenBy = ['notification', 'voided_purchases_api'] as const;
export type GooglePlayVoidSeenBy = (typeof googlePlayVoidSeenBy)[number];

/** Every voided purchase Tally has seen, once per order. */
export interface GooglePlayVoidedPurchasesTable {
  order_id: string;
  purchase_token: string;
  seen_by: GooglePlayVoidSeenBy;
  voided_at: DbTimeNullable;
  inbox_event_id: number | null;
  created_at: DbTime;
}
