import { z } from 'zod';

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
});
export type WalletEntryData = z.infer<typeof walletEntryDataSchema>;

/** The `data` of `wallet.balance_low`, written by postLedgerEntry with the debit that crossed the threshold. */
export const walletBalanceLowDataSchema = z.strictObject({
  userId: z.string().min(1),
  balance: z.number().int().nonnegative(),
  threshold: z.number().int(),
});
export type WalletBalanceLowData = z.infer<typeof walletBalanceLowDataSchema>;

/** The user's subscription as `GET /v1/users/{userId}/subscription` answers it. */
export interface SubscriptionUpdatedData {
  userId: string;
  planId: string | null;
  status: 'active' | 'inactive';
  expiresAt: string | null;
  store: string | null;
  autoRenew: boolean;
}

export interface StudioRequestData {
  userId: string;
  /** The request's public id, as the studio API shows it. */
  id: string;
  kind: string;
  status: 'completed' | 'failed';
  tokensCharged: number;
  refunded: boolean;
  /** Null when completed. */
  error: { code: string | null; message: string | null } | null;
}

/** Messages written by their flows through writeAppWebhookMessage; wallet.* come from postLedgerEntry only. */
export type FlowAppWebhookMessage =
  | { type: 'subscription.updated'; userId: string; data: SubscriptionUpdatedData }
  | { type: 'studio.request.completed' | 'studio.request.failed'; userId: string; data: StudioRequestData };
