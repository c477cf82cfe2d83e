import type { PaymentProvider, Provider, SubscriptionSource } from '../db/schema';
import type { HoldView } from '../holds/list-holds';
import type { InboxEventView } from '../inbox/to-inbox-event-view';
import type { LotView } from '../ledger/read-wallet';

// The shape of the support view (`GET /admin/users/{userId}`, `tally user <id>`): the view, one type
// per section, and what every reader takes. Types only; the readers import this file, never the
// other way round.

/** Everything Tally knows about one user; each field is one section, filled by its own reader. */
export interface UserSupportView {
  /** The id asked for. */
  userId: string;
  /** The canonical user it is linked to (`user_aliases`), or the id itself; every section reads this user. */
  canonicalUserId: string;
  wallet: SupportWallet;
  /** Holds (docs/holds.md): the active ones first, then the newest ended ones (limited). */
  holds: SupportHolds;
  /** Inbox events naming the user or any of its aliases: errors first (parked, then retrying or waiting), then newest. */
  events: SupportEvents;
  /** Ledger entries newest first; `sum` covers every entry, not only those listed. */
  ledger: SupportLedger;
  /** The subscription from both sources and its history; null when neither source has one. */
  subscription: SupportSubscription | null;
  /** Stripe payments (packs, top-ups, invoices) newest first, with refunds and their confirmation email. */
  payments: SupportPayment[];
  /** Token pack refunds (`token_refunds`: RevenueCat, Google Play; `apple_refunds`: the App Store), newest first. */
  refunds: SupportRefund[];
  /** Stripe chargebacks (`stripe_disputes`): what each took, its shortfall and its reinstatement, newest first. */
  disputes: SupportDispute[];
  /** Top-ups started through the API, newest first. */
  topups: SupportTopup[];
  /** Annual-plan installments, by due date. */
  installments: SupportInstallment[];
  /** AI Studio requests, newest first (limited). */
  studioRequests: SupportStudioRequests;
  /** Ids linked to the user: aliases, Stripe customers, provider ids stored with its events (deduplicated). */
  linkedIds: SupportLinkedId[];
}

/**
 * Who the view is about: the canonical user and every id linked to it (canonical first). Sections
 * that hold the user's own rows read `userIds`, so a row written under an alias is not missed.
 */
export interface SupportSubject {
  userId: string;
  userIds: readonly string[];
  /**
   * Stripe ids Tally has filed under the user (customers, subscriptions, payment intents of its
   * payments and top-ups, invoices): Stripe events that name only these (an invoice, a refunded
   * charge, a subscription change) carry no user id in the inbox, yet belong in the user's view.
   */
  stripeIds: { customers: string[]; subscriptions: string[]; paymentIntents: string[]; invoices: string[] };
}

/** How many rows the limited sections list (their totals count every row). */
export interface SupportViewLimits {
  events: number;
  ledgerEntries: number;
  studioRequests: number;
  subscriptionHistory: number;
  /** Holds shown: the active ones first, then the newest ended ones up to this many in all. */
  holds: number;
  /**
   * Keyset paging of the ledger: only entries with an id below this (the page after the last id
   * shown). Served by `ledger_entries_user_idx (user_id, id)`, so a page costs the same on a user
   * with 10,000 entries as on one with ten.
   */
  ledgerBeforeId?: number | undefined;
}

/** The wallet row; a user without one shows balance 0 and no creation date. */
export interface SupportWallet {
  balance: number;
  /** What the user's active holds reserve (docs/holds.md). */
  held: number;
  /** `balance − held`: what a debit or a new hold can use now. */
  available: number;
  createdAt: Date | null;
  /** Its lots with tokens left, in the draw order (docs/lots.md). */
  lots: LotView[];
  /** Tokens owed (docs/debt.md): the open part of `debts`. */
  debt: number;
  /** What made the debt and what settled it, oldest first: every take-back or priced capture that could not take all. */
  debts: SupportDebt[];
}

/** One source of debt (a take_back_shortfalls row): what could not be taken, and what of it was settled since. */
export interface SupportDebt {
  id: number;
  /** `stripe_refund`, `stripe_dispute`, `revenuecat_refund` or `priced_capture`. */
  source: string;
  sourceId: string;
  /** The ledger entry of the take-back (or the priced capture's excess) that fell short. */
  takeBackReference: string;
  /** What could not be taken. */
  owed: number;
  /** What later credits, freed holds and failed generations' refunds settled of it. */
  settled: number;
  /** What support forgave of it. */
  forgiven: number;
  /** Closed: forgiven (a chargeback won) or settled in full. */
  closedAt: Date | null;
  createdAt: Date;
}

/** A hold as support sees it: the API's hold and the lots it reserves (in the draw order at placement). */
export type SupportHold = HoldView & { lots: { lotId: number; amount: number }[] };

export interface SupportHolds {
  /** Every active hold of the user (those listed may be fewer). */
  activeTotal: number;
  /** Active holds first (newest first), then ended ones (captured, released, expired), newest first. */
  items: SupportHold[];
}

/** Whether an event needs attention, in the order support reads them. */
export type SupportAttention = 'parked' | 'retrying' | 'waiting' | 'in_progress' | 'none';

/** An inbox event in the same shape as `GET /admin/events` (no raw body), plus why it needs attention. */
export type SupportEvent = InboxEventView & { attention: SupportAttention };

export interface SupportEvents {
  items: SupportEvent[];
  total: number;
  truncated: boolean;
}

export interface SupportLedgerEntry {
  id: number;
  reference: string;
  amount: number;
  balanceBefore: number;
  balanceAfter: number;
  reason: string;
  inboxEventId: number | null;
  createdAt: Date;
}

export interface SupportLedger {
  entries: SupportLedgerEntry[];
  total: number;
  truncated: boolean;
  sum: number;
  /** Whether the wallet's balance equals the sum of its entries (it always should). */
  matchesBalance: boolean;
}

/** The combined answer of `GET /v1/users/{userId}/subscription`, plus where it came from. */
export interface SupportCurrentSubscription {
  source: SubscriptionSource;
  planId: string | null;
  status: 'active' | 'inactive';
  expiresAt: Date | null;
  store: string | null;
  autoRenew: boolean;
}

export interface SupportSubscription {
  current: SupportCurrentSubscription | null;
  /** The RevenueCat row (`subscriptions`), as last synced. */
  revenuecat: {
    status: 'active' | 'inactive';
    planId: string | null;
    productId: string | null;
    expiresAt: Date | null;
    store: string | null;
    autoRenew: boolean;
    billingIssueDetectedAt: Date | null;
    providerReadAt: Date | null;
    updatedAt: Date;
  } | null;
  /** Stripe subscriptions (`stripe_subscriptions`) as the Stripe API last reported them. */
  stripe: {
    subscriptionId: string;
    customerId: string | null;
    planId: string | null;
    priceId: string | null;
    interval: 'month' | 'year' | null;
    status: string;
    currentPeriodEnd: Date | null;
    cancelAtPeriodEnd: boolean;
    canceledAt: Date | null;
    endedAt: Date | null;
    updatedAt: Date;
  }[];
  /** `subscription_history` (RevenueCat changes), newest first, limited. */
  history: {
    id: number;
    source: string;
    change: string;
    fromStatus: string | null;
    toStatus: string;
    fromPlanId: string | null;
    toPlanId: string | null;
    fromExpiresAt: Date | null;
    toExpiresAt: Date | null;
    toStore: string | null;
    toAutoRenew: boolean;
    cause: string;
    inboxEventId: number | null;
    requestId: string | null;
    createdAt: Date;
  }[];
  historyTotal: number;
}

export interface SupportPayment {
  id: number;
  provider: PaymentProvider;
  providerPaymentId: string;
  kind: string;
  productId: string;
  amountMinor: number;
  currency: string;
  status: string;
  ledgerReference: string;
  tokensGranted: number;
  amountRefundedMinor: number;
  tokensRefunded: number;
  /** Tokens a refund should have taken back but the user had already spent. */
  refundShortfall: number;
  refundedAt: Date | null;
  inboxEventId: number | null;
  createdAt: Date;
  /** The confirmation email (`email_outbox`, at most one per payment). */
  email: {
    status: string;
    toAddress: string | null;
    attempts: number;
    lastError: string | null;
    sentAt: Date | null;
  } | null;
}

export interface SupportDispute {
  disputeId: string;
  /** The disputed payment (`payments.provider_payment_id`: an intent or an invoice id). */
  providerPaymentId: string;
  chargeId: string | null;
  /** Stripe's status as last read. */
  status: string;
  tokensOwed: number;
  tokensTaken: number;
  /** Tokens the chargeback should have taken back but the user had already spent. */
  shortfall: number;
  tokensReinstated: number;
  withdrawnAt: Date;
  reinstatedAt: Date | null;
  /** The references the withdrawal and the reinstatement post under. */
  ledgerReference: string;
  reinstatedReference: string;
}

export interface SupportRefund {
  id: number;
  provider: Provider;
  providerRefundId: string;
  packId: string;
  creditReference: string;
  tokensCredited: number;
  tokensTaken: number;
  shortfall: number;
  inboxEventId: number | null;
  createdAt: Date;
}

export interface SupportTopup {
  reference: string;
  packId: string;
  tokens: number;
  amountMinor: number;
  currency: string;
  paymentIntentId: string | null;
  status: string;
  paidAt: Date | null;
  createdAt: Date;
}

export interface SupportInstallment {
  id: number;
  subscriptionId: string;
  invoiceId: string;
  sequence: number;
  tokens: number;
  dueAt: Date;
  status: string;
  attempts: number;
  lastError: string | null;
  grantedAt: Date | null;
  /** The reference the grant is (or will be) posted under. */
  ledgerReference: string;
}

export interface SupportStudioRequest {
  id: string;
  kind: string;
  durationSeconds: number | null;
  full: boolean;
  status: string;
  priceTokens: number;
  tokensCharged: number;
  freeTier: boolean;
  attempts: number;
  error: { code: string | null; message: string | null } | null;
  refundedAt: Date | null;
  createdAt: Date;
  completedAt: Date | null;
  failedAt: Date | null;
}

export interface SupportStudioRequests {
  items: SupportStudioRequest[];
  total: number;
  truncated: boolean;
}

export interface SupportLinkedId {
  provider: Provider | 'tally';
  /** `alias`: another id linked to the same canonical user (`user_aliases`). */
  kind: 'alias' | 'customer' | 'subscription' | 'payment_intent' | 'invoice';
  id: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
}
