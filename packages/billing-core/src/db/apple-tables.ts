import type { ColumnType, Generated, Selectable } from 'kysely';
import type { DbTime, DbTimeNullable } from './column-types';

// Apple's own tables (migration 0046; docs/stores-apple.md). Its pack purchases are `payments`
// rows (provider 'apple'); db/schema.ts gathers every table in DB.

/** One refund of an Apple pack (a transaction and its revocationDate), and its reversal. */
export interface AppleRefundsTable {
  id: Generated<number>;
  transaction_id: string;
  revoked_at: Date;
  payment_id: number;
  user_id: string;
  revocation_reason: number | null;
  tokens_owed: number;
  /** What the take-back took, plus what later settled its shortfall (settleSource). */
  tokens_taken: ColumnType<number, number | undefined, number>;
  shortfall: ColumnType<number, never, never>;
  tokens_given_back: ColumnType<number, number | undefined, number>;
  refund_inbox_event_id: number | null;
  reversed_at: DbTimeNullable;
  reversed_inbox_event_id: number | null;
  created_at: DbTime;
}

export const appleConsumptionStatuses = ['pending', 'sent', 'no_consent', 'rejected', 'expired'] as const;
export type AppleConsumptionStatus = (typeof appleConsumptionStatuses)[number];

/** A CONSUMPTION_REQUEST to answer after commit (the apple-consumption loop). */
export interface AppleConsumptionRequestsTable {
  id: Generated<number>;
  notification_uuid: string;
  transaction_id: string;
  /** The notification's environment (a PaymentEnvironment; spelled out: schema.ts imports this file). */
  environment: 'production' | 'sandbox';
  payment_id: number;
  user_id: string;
  reason: string | null;
  /** Apple ignores an answer after this (12 hours after the notification was signed). */
  answer_by: Date;
  status: ColumnType<AppleConsumptionStatus, AppleConsumptionStatus | undefined, AppleConsumptionStatus>;
  consumption_percentage: number | null;
  tries: ColumnType<number, number | undefined, number>;
  next_attempt_at: DbTime;
  locked_until: DbTimeNullable;
  last_error: string | null;
  inbox_event_id: number | null;
  created_at: DbTime;
  updated_at: DbTime;
  finished_at: DbTimeNullable;
}

export type AppleRefundRow = Selectable<AppleRefundsTable>;
export type AppleConsumptionRequestRow = Selectable<AppleConsumptionRequestsTable>;
