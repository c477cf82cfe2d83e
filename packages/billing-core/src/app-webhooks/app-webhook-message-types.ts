import { z } from 'zod';
import type { AppWebhookMessageType } from '../db/schema';

/**
 * The `data` of `wallet.credited` / `wallet.debited` (docs/app-webhooks.md): the ledger entry as
 * the app sees it, amounts in signed whole tokens. postLedgerEntry builds it in SQL
 * (`ledger/ledger-entry-messages.ts`); `wallet-message-data.int.test.ts` holds every message it
 * writes, and the docs' field list, to this schema.
 */
export const walletEntryDataSchema = z.strictObject({
  userId: z.string().min(1),
  reference: z.string().min(1),
  /** Signed, as in the ledger: positive for wallet.credited, negative for wallet.debited. */
  amount: z.number().int(),
  balanceBefore: z.number().int().nonnegative(),
  balanceAfter: z.number().int().nonnegative(),
  reason: z.string().min(1),
  /** The entry's created_at, ISO 8601 in UTC to the millisecond. */
  createdAt: z.iso.datetime({ precision: 3 }),
  /** A usage's or a priced capture's debit (docs/features.md): the feature, its variant, the quantities and the cost. */
  feature: z.string().min(1).optional(),
  variant: z.string().min(1).nullable().optional(),
  quantities: z.record(z.string(), z.number().int().nonnegative()).optional(),
  cost: z.number().int().nonnegative().optional(),
});
export type WalletEntryData = z.infer<typeof walletEntryDataSchema>;

/** The `data` of `wallet.balance_low`, written by postLedgerEntry with the debit that crossed the threshold. */
export const walletBalanceLowDataSchema = z.strictObject({
  userId: z.string().min(1),
  balance: z.number().int().nonnegative(),
  threshold: z.number().int(),
});
export type WalletBalanceLowData = z.infer<typeof walletBalanceLowDataSchema>;

/**
 * The `data` of `wallet.credits_expired`: the expiry sweeper's ledger entry (reason
 * `credits_expired`), announced instead of wallet.debited. postLedgerEntry builds it in SQL.
 */
export const walletCreditsExpiredDataSchema = z.strictObject({
  userId: z.string().min(1),
  /** The lot that expired (the entry's one draw). */
  lotId: z.number().int().positive(),
  /** Signed, as in the ledger: what expired, negative. */
  amount: z.number().int().negative(),
  balanceAfter: z.number().int().nonnegative(),
  /** `lot:{lotId}:expired`, or `lot:{lotId}:expired:{n}` for a later expiry of the same lot. */
  reference: z.string().min(1),
});
export type WalletCreditsExpiredData = z.infer<typeof walletCreditsExpiredDataSchema>;

/**
 * The `data` of `wallet.debt_changed` (docs/debt.md): the wallet's debt after a change, the change
 * (positive: owed more), why (a take-back's source, `debt_settled`, `take_back_recovered`,
 * `dispute_reinstated`, `forgiven`) and the ledger reference behind it (null for a forgive).
 * Written by the ledger in the change's transaction.
 */
export const walletDebtChangedDataSchema = z.strictObject({
  userId: z.string().min(1),
  debt: z.number().int().nonnegative(),
  change: z.number().int(),
  reason: z.string().min(1),
  reference: z.string().min(1).nullable(),
});
export type WalletDebtChangedData = z.infer<typeof walletDebtChangedDataSchema>;

/**
 * The `data` of `wallet.auto_topup_failed` (docs/auto-topup.md): an off-session charge ended
 * unpaid. `code` is Stripe's decline code (or error code); with `requiresAction` the bank wants
 * the customer: the app brings them back on session and confirms the PaymentIntent with
 * `clientSecret` (Stripe.js), which then credits through the top-up path like any payment.
 */
export const walletAutoTopupFailedDataSchema = z.strictObject({
  userId: z.string().min(1),
  attemptId: z.string().min(1),
  code: z.string().min(1),
  requiresAction: z.boolean(),
  /** The PaymentIntent's client secret (null when Stripe made none). */
  clientSecret: z.string().min(1).nullable(),
});
export type WalletAutoTopupFailedData = z.infer<typeof walletAutoTopupFailedDataSchema>;

/** The `data` of `wallet.auto_topup_disabled`: Tally turned auto top-up off until the app enables it again. */
export const walletAutoTopupDisabledDataSchema = z.strictObject({
  userId: z.string().min(1),
  /** `failures`: three failed attempts in a row; `operator`: turned off from the console or the admin API. */
  reason: z.enum(['failures', 'operator']),
  failuresInARow: z.number().int().nonnegative(),
});
export type WalletAutoTopupDisabledData = z.infer<typeof walletAutoTopupDisabledDataSchema>;

/** The `data` of `wallet.credits_expiring`: once per lot, CREDIT_EXPIRY_NOTICE_HOURS before it expires. */
export const walletCreditsExpiringDataSchema = z.strictObject({
  userId: z.string().min(1),
  lotId: z.number().int().positive(),
  /** The lot's tokens left when the notice was written. */
  remaining: z.number().int().positive(),
  /** ISO 8601 in UTC to the millisecond. */
  expiresAt: z.iso.datetime({ precision: 3 }),
});
export type WalletCreditsExpiringData = z.infer<typeof walletCreditsExpiringDataSchema>;

/** The user's subscription as `GET /v1/users/{userId}/subscription` answers it. */
export const subscriptionUpdatedDataSchema = z.strictObject({
  userId: z.string(),
  planId: z.string().nullable(),
  status: z.enum(['active', 'inactive']),
  /** Null while active: lifetime (RevenueCat only). */
  expiresAt: z.string().nullable(),
  /** The RevenueCat store (`app_store`, `play_store`, …), or `stripe`. */
  store: z.string().nullable(),
  autoRenew: z.boolean(),
});
export type SubscriptionUpdatedData = z.infer<typeof subscriptionUpdatedDataSchema>;

export const studioRequestDataSchema = z.strictObject({
  userId: z.string(),
  /** The request's public id, as the studio API shows it. */
  id: z.string(),
  kind: z.string(),
  status: z.enum(['completed', 'failed']),
  tokensCharged: z.number().int(),
  refunded: z.boolean(),
  /** Null when completed. */
  error: z.strictObject({ code: z.string().nullable(), message: z.string().nullable() }).nullable(),
});
export type StudioRequestData = z.infer<typeof studioRequestDataSchema>;

/**
 * The `data` schema of every message type: the body the app receives is
 * `{"type", "timestamp", "data"}` (toAppWebhookBody). The OpenAPI document's `webhooks` and
 * @tally/client's verifyAppWebhook are built from this table.
 */
export const appWebhookDataSchemas = {
  'wallet.credited': walletEntryDataSchema,
  'wallet.debited': walletEntryDataSchema,
  'wallet.balance_low': walletBalanceLowDataSchema,
  'subscription.updated': subscriptionUpdatedDataSchema,
  'studio.request.completed': studioRequestDataSchema,
  'studio.request.failed': studioRequestDataSchema,
  'wallet.credits_expiring': walletCreditsExpiringDataSchema,
  'wallet.credits_expired': walletCreditsExpiredDataSchema,
  'wallet.debt_changed': walletDebtChangedDataSchema,
  'wallet.auto_topup_failed': walletAutoTopupFailedDataSchema,
  'wallet.auto_topup_disabled': walletAutoTopupDisabledDataSchema,
} as const satisfies Record<AppWebhookMessageType, z.ZodType>;

/**
 * Messages written by their flows through writeAppWebhookMessage; the wallet.* of a ledger entry
 * come from postLedgerEntry only (wallet.credits_expiring is the expiry sweeper's notice, no entry).
 */
export type FlowAppWebhookMessage =
  | { type: 'subscription.updated'; userId: string; data: SubscriptionUpdatedData }
  | { type: 'studio.request.completed' | 'studio.request.failed'; userId: string; data: StudioRequestData }
  | { type: 'wallet.credits_expiring'; userId: string; data: WalletCreditsExpiringData }
  | { type: 'wallet.auto_topup_failed'; userId: string; data: WalletAutoTopupFailedData }
  | { type: 'wallet.auto_topup_disabled'; userId: string; data: WalletAutoTopupDisabledData };
