import { type ExpressionBuilder, type Kysely, sql, type Transaction } from 'kysely';
import type { DB, Provider } from '../db/schema';
import { type InboxEventSummary, inboxSummaryColumns } from '../inbox/list-inbox-events';
import { type InboxEventView, toInboxEventView } from '../inbox/to-inbox-event-view';
import { resolveUserId } from '../users/link-user-ids';
import { readRefundsSection, readStripeSections } from './read-stripe-sections';
import { readStudioSection } from './read-studio-section';
import { readSubscriptionSection } from './read-subscription-section';

/**
 * "Where is my purchase?" in one call: everything Tally knows about one user. Each section is
 * filled by a reader; a flow that adds a table adds a reader for its section (see
 * docs/operations.md). Sections whose tables do not exist yet keep their empty default.
 */
export interface UserSupportView {
  /** The id asked for. */
  userId: string;
  /** The canonical user it is linked to (`user_aliases`), or the id itself; every section reads this user. */
  canonicalUserId: string;
  wallet: { balance: number; createdAt: Date | null };
  /** Inbox events naming the user or any of its aliases: errors first (parked, then retrying or waiting), then newest. */
  events: { items: SupportEvent[]; total: number; truncated: boolean };
  /** Ledger entries newest first; `sum` covers every entry, not only those listed. */
  ledger: {
    entries: SupportLedgerEntry[];
    total: number;
    truncated: boolean;
    sum: number;
    /** Whether the wallet's balance equals the sum of its entries (it always should). */
    matchesBalance: boolean;
  };
  /** The subscription from both sources and its history; null when neither source has one. */
  subscription: SupportSubscription | null;
  /** Stripe payments (packs, top-ups, invoices) newest first, with refunds and their confirmation email. */
  payments: SupportPayment[];
  /** Token pack refunds recorded in `token_refunds` (RevenueCat), newest first. */
  refunds: SupportRefund[];
  /** Top-ups started through the API, newest first. */
  topups: SupportTopup[];
  /** Annual-plan installments, by due date. */
  installments: SupportInstallment[];
  /** AI Studio requests, newest first (limited). */
  studioRequests: { items: SupportStudioRequest[]; total: number; truncated: boolean };
  /** Ids linked to the user: aliases, Stripe customers, provider ids stored with its events (deduplicated). */
  linkedIds: SupportLinkedId[];
}

/** Whether an event needs attention, in the order support reads them. */
export type SupportAttention = 'parked' | 'retrying' | 'waiting' | 'in_progress' | 'none';

/** An inbox event in the same shape as `GET /admin/events` (no raw body), plus why it needs attention. */
export type SupportEvent = InboxEventView & { attention: SupportAttention };
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
/** The combined answer of `GET /v1/users/{userId}/subscription`, plus where it came from. */
export interface SupportCurrentSubscription {
  source: 'revenuecat' | 'stripe';
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
  provider: 'stripe';
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
export interface SupportLinkedId {
  provider: Provider | 'tally';
  /** `alias`: another id linked to the same canonical user (`user_aliases`). */
  kind: 'alias' | 'customer' | 'subscription' | 'payment_intent' | 'invoice';
  id: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export interface SupportViewLimits {
  events: number;
  ledgerEntries: number;
  studioRequests: number;
  subscriptionHistory: number;
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

/** The user's inbox events: filed under one of its ids, or a Stripe event naming one of its Stripe ids. */
function userEvents(subject: SupportSubject) {
  return (eb: ExpressionBuilder<DB, 'inbox_events'>) => {
    const { customers, subscriptions, paymentIntents, invoices } = subject.stripeIds;
    const stripe = [
      ...(customers.length > 0 ? [eb('provider_customer_id', 'in', customers)] : []),
      ...(subscriptions.length > 0 ? [eb('provider_subscription_id', 'in', subscriptions)] : []),
      ...(paymentIntents.length > 0 ? [eb('provider_payment_intent_id', 'in', paymentIntents)] : []),
      ...(invoices.length > 0 ? [eb('provider_invoice_id', 'in', invoices)] : []),
    ];
    const byUser = eb('user_id', 'in', subject.userIds);
    return stripe.length === 0 ? byUser : eb.or([byUser, eb.and([eb('provider', '=', 'stripe'), eb.or(stripe)])]);
  };
}

/** Every Stripe id filed under one of the user's ids, read in the view's snapshot. */
async function stripeIdsOf(trx: Transaction<DB>, userIds: readonly string[]): Promise<SupportSubject['stripeIds']> {
  const [customers, subscriptions, payments, topups, installments] = await Promise.all([
    trx.selectFrom('stripe_customers').select('customer_id').where('user_id', 'in', userIds).execute(),
    trx.selectFrom('stripe_subscriptions').select('subscription_id').where('user_id', 'in', userIds).execute(),
    trx.selectFrom('payments').select(['provider_payment_id', 'kind']).where('user_id', 'in', userIds).execute(),
    trx
      .selectFrom('topups')
      .select('payment_intent_id')
      .where('user_id', 'in', userIds)
      .where('payment_intent_id', 'is not', null)
      .execute(),
    trx.selectFrom('stripe_installments').select('invoice_id').where('user_id', 'in', userIds).execute(),
  ]);
  const unique = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];
  return {
    customers: unique(customers.map((row) => row.customer_id)),
    subscriptions: unique(subscriptions.map((row) => row.subscription_id)),
    paymentIntents: unique([
      ...payments.filter((row) => row.kind !== 'subscription_invoice').map((row) => row.provider_payment_id),
      ...topups.map((row) => row.payment_intent_id),
    ]),
    invoices: unique([
      ...payments.filter((row) => row.kind === 'subscription_invoice').map((row) => row.provider_payment_id),
      ...installments.map((row) => row.invoice_id),
    ]),
  };
}

/** One section of the view: reads its tables (in the view's snapshot) and returns its fields. */
export type SupportSectionReader = (
  trx: Transaction<DB>,
  subject: SupportSubject,
  limits: SupportViewLimits,
) => Promise<Partial<Omit<UserSupportView, 'userId' | 'canonicalUserId'>>>;

export const defaultSupportViewLimits: SupportViewLimits = {
  events: 100,
  ledgerEntries: 100,
  studioRequests: 50,
  subscriptionHistory: 50,
};

/** Wallet and ledger together, so the balance check compares numbers from one snapshot. */
export const readWalletAndLedger: SupportSectionReader = async (trx, { userId }, limits) => {
  const wallet = await trx
    .selectFrom('wallets')
    .select(['balance', 'created_at'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const totals = await trx
    .selectFrom('ledger_entries')
    .select([sql<string>`count(*)`.as('count'), sql<string>`coalesce(sum(amount), 0)`.as('sum')])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const rows = await trx
    .selectFrom('ledger_entries')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(limits.ledgerEntries)
    .execute();
  const balance = wallet?.balance ?? 0;
  const total = Number(totals.count);
  const sum = Number(totals.sum);
  return {
    wallet: { balance, createdAt: wallet?.created_at ?? null },
    ledger: {
      entries: rows.map((row) => ({
        id: row.id,
        reference: row.reference,
        amount: row.amount,
        balanceBefore: row.balance_before,
        balanceAfter: row.balance_after,
        reason: row.reason,
        inboxEventId: row.inbox_event_id,
        createdAt: row.created_at,
      })),
      total,
      truncated: total > rows.length,
      sum,
      matchesBalance: sum === balance,
    },
  };
};

const attentionRank = sql<number>`CASE
  WHEN status = 'failed' THEN 0
  WHEN status IN ('received', 'processing') AND outcome_code = 'retrying' THEN 1
  WHEN status IN ('received', 'processing') AND outcome_code = 'waiting' THEN 2
  WHEN status IN ('received', 'processing') THEN 3
  ELSE 4 END`;
const attentionByRank: readonly SupportAttention[] = ['parked', 'retrying', 'waiting', 'in_progress', 'none'];

/**
 * Inbox events naming the user, an alias, or one of its Stripe ids, the ones needing attention
 * first, then newest first.
 */
export const readEvents: SupportSectionReader = async (trx, subject, limits) => {
  const rows = await trx
    .selectFrom('inbox_events')
    .select(inboxSummaryColumns)
    .select(attentionRank.as('attention_rank'))
    .where(userEvents(subject))
    .orderBy('attention_rank')
    .orderBy('id', 'desc')
    .limit(limits.events)
    .execute();
  const { count } = await trx
    .selectFrom('inbox_events')
    .select(sql<string>`count(*)`.as('count'))
    .where(userEvents(subject))
    .executeTakeFirstOrThrow();
  const total = Number(count);
  return {
    events: {
      items: rows.map((row) => toSupportEvent(row, attentionByRank[row.attention_rank] ?? 'none')),
      total,
      truncated: total > rows.length,
    },
  };
};

function toSupportEvent(event: InboxEventSummary, attention: SupportAttention): SupportEvent {
  return { ...toInboxEventView(event), attention };
}

const linkedIdColumns = [
  ['provider_customer_id', 'customer'],
  ['provider_subscription_id', 'subscription'],
  ['provider_payment_intent_id', 'payment_intent'],
  ['provider_invoice_id', 'invoice'],
] as const;

/** Provider ids the inbox has stored with the user's events, its aliases and its Stripe customers. */
export const readLinkedIds: SupportSectionReader = async (trx, subject) => {
  const { userId, userIds } = subject;
  const linked: SupportLinkedId[] = [];
  for (const [column, kind] of linkedIdColumns) {
    const rows = await trx
      .selectFrom('inbox_events')
      .select(['provider', sql<string>`${sql.ref(column)}`.as('id')])
      .select([sql<Date>`min(received_at)`.as('first_seen_at'), sql<Date>`max(received_at)`.as('last_seen_at')])
      .where(userEvents(subject))
      .where(column, 'is not', null)
      .groupBy(['provider', column])
      .orderBy('first_seen_at')
      .execute();
    for (const row of rows) {
      linked.push({
        provider: row.provider,
        kind,
        id: row.id,
        firstSeenAt: row.first_seen_at,
        lastSeenAt: row.last_seen_at,
      });
    }
  }
  const aliases = await trx
    .selectFrom('user_aliases')
    .select(['alias', 'created_at'])
    .where('user_id', '=', userId)
    .where('alias', '<>', userId)
    .orderBy('created_at')
    .orderBy('alias')
    .execute();
  for (const alias of aliases) {
    linked.push({
      provider: 'tally',
      kind: 'alias',
      id: alias.alias,
      firstSeenAt: alias.created_at,
      lastSeenAt: alias.created_at,
    });
  }
  const customers = await trx
    .selectFrom('stripe_customers')
    .select(['customer_id', 'created_at'])
    .where('user_id', 'in', userIds)
    .orderBy('created_at')
    .execute();
  for (const customer of customers) {
    linked.push({
      provider: 'stripe',
      kind: 'customer',
      id: customer.customer_id,
      firstSeenAt: customer.created_at,
      lastSeenAt: customer.created_at,
    });
  }
  return { linkedIds: linked };
};

/**
 * The readers of this build, in the order their sections are filled. A flow that adds a table
 * appends its reader here; a reader may also add to `linkedIds`.
 */
export const supportSectionReaders: readonly SupportSectionReader[] = [
  readWalletAndLedger,
  readEvents,
  readSubscriptionSection,
  readStripeSections,
  readRefundsSection,
  readStudioSection,
  readLinkedIds,
];

/** Linked ids with the same provider, kind and id merged: the earliest first sighting, the latest last one. */
function mergeLinkedIds(linked: readonly SupportLinkedId[]): SupportLinkedId[] {
  const merged = new Map<string, SupportLinkedId>();
  for (const entry of linked) {
    const key = `${entry.provider}\u0000${entry.kind}\u0000${entry.id}`;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...entry });
    else {
      if (entry.firstSeenAt < seen.firstSeenAt) seen.firstSeenAt = entry.firstSeenAt;
      if (entry.lastSeenAt > seen.lastSeenAt) seen.lastSeenAt = entry.lastSeenAt;
    }
  }
  return [...merged.values()];
}

/**
 * The support view of one user, read in one repeatable-read, read-only transaction so every
 * section describes the same moment. The id may be an alias: the view is the canonical user's
 * (`resolveUserId`), and sections holding the user's own rows also read rows filed under any id
 * linked to it. A user Tally has never seen gets an empty view, not an error.
 */
export async function findUserSupportView(
  db: Kysely<DB>,
  userId: string,
  options: { limits?: Partial<SupportViewLimits>; readers?: readonly SupportSectionReader[] } = {},
): Promise<UserSupportView> {
  const limits = { ...defaultSupportViewLimits, ...options.limits };
  const readers = options.readers ?? supportSectionReaders;
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const canonicalUserId = await resolveUserId(trx, userId);
      const aliases = await trx
        .selectFrom('user_aliases')
        .select('alias')
        .where('user_id', '=', canonicalUserId)
        .orderBy('alias')
        .execute();
      const userIds = [
        canonicalUserId,
        ...aliases.map((row) => row.alias).filter((alias) => alias !== canonicalUserId),
      ];
      const subject: SupportSubject = {
        userId: canonicalUserId,
        userIds,
        stripeIds: await stripeIdsOf(trx, userIds),
      };
      const view: UserSupportView = {
        userId,
        canonicalUserId,
        wallet: { balance: 0, createdAt: null },
        events: { items: [], total: 0, truncated: false },
        ledger: { entries: [], total: 0, truncated: false, sum: 0, matchesBalance: true },
        subscription: null,
        payments: [],
        refunds: [],
        topups: [],
        installments: [],
        studioRequests: { items: [], total: 0, truncated: false },
        linkedIds: [],
      };
      const linked: SupportLinkedId[] = [];
      for (const reader of readers) {
        const section = await reader(trx, subject, limits);
        const { linkedIds, ...rest } = section;
        Object.assign(view, rest);
        if (linkedIds) linked.push(...linkedIds);
      }
      view.linkedIds = mergeLinkedIds(linked);
      return view;
    });
}
