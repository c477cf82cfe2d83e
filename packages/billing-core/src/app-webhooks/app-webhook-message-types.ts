/** The `data` of each message type (docs/app-webhooks.md); amounts are signed whole tokens. */
export interface WalletEntryData {
  userId: string;
  reference: string;
  /** Signed, as in the ledger: positive for wallet.credited, negative for wallet.debited. */
  amount: number;
  balanceBefore: number;
  balanceAfter: number;
  reason: string;
  createdAt: string;
}

export interface WalletBalanceLowData {
  userId: string;
  balance: number;
  threshold: number;
}

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
