import type { ColumnType, Generated } from 'kysely';
import type { DbTime, DbTimeNullable } from './column-types';

// The ledger's tables: users, wallets, entries, credit lots, draws, holds (db/schema.ts gathers
// every table in DB).

export interface UsersTable {
  id: string;
  created_at: DbTime;
}

export interface WalletsTable {
  user_id: string;
  balance: ColumnType<number, number | undefined, number>;
  /** Open debt (migration 0039): kept by the trigger on take_back_shortfalls, never written directly. */
  debt: ColumnType<number, never, never>;
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
  /** jsonb `{meter: quantity}`, read back parsed (feature-uses/feature-use.ts reads it). */
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

/** A user's own spend limits (migration 0041, docs/spend-limits.md); NULL: the default applies. */
export interface SpendLimitsTable {
  user_id: string;
  daily: number | null;
  monthly: number | null;
  updated_at: DbTime;
}

/** Tokens a user spent in one UTC day (migration 0041): written by the posting statement of each spend. */
export interface SpendDaysTable {
  user_id: string;
  day: ColumnType<string, string, string>;
  spent: number;
}
