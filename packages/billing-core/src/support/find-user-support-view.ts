import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, InboxStatus, Provider } from '../db/schema';
import { type InboxEventSummary, inboxSummaryColumns } from '../inbox/list-inbox-events';

/**
 * "Where is my purchase?" in one call: everything Tally knows about one user. Each section is
 * filled by a reader; a flow that adds a table adds a reader for its section (see
 * docs/operations.md). Sections whose tables do not exist yet keep their empty default.
 */
export interface UserSupportView {
  userId: string;
  wallet: { balance: number; createdAt: Date | null };
  /** Inbox events naming the user: errors first (parked, then retrying or waiting), then newest. */
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
  /** The current subscription and its history; filled by the subscription flow's reader. */
  subscription: SupportSubscription | null;
  /** Payments, refunds and installments; filled by the Stripe flow's reader. */
  payments: SupportRecord[];
  /** AI Studio requests; filled by the studio flow's reader. */
  studioRequests: SupportRecord[];
  /** Provider ids seen with this user (customers, subscriptions, payment intents, invoices). */
  linkedIds: SupportLinkedId[];
}

/** Whether an event needs attention, in the order support reads them. */
export type SupportAttention = 'parked' | 'retrying' | 'waiting' | 'in_progress' | 'none';

/** An inbox event in the same shape as `GET /admin/events` (no raw body), plus why it needs attention. */
export interface SupportEvent {
  id: number;
  provider: Provider;
  providerEventId: string;
  type: string;
  livemode: boolean | null;
  environment: string | null;
  userId: string | null;
  providerCustomerId: string | null;
  providerSubscriptionId: string | null;
  providerPaymentIntentId: string | null;
  providerInvoiceId: string | null;
  status: InboxStatus;
  attempts: number;
  lastError: string | null;
  outcome: { code: string; detail: string | null } | null;
  nextAttemptAt: Date | null;
  waitingSince: Date | null;
  deferrals: number;
  replays: number;
  replayedAt: Date | null;
  receivedAt: Date;
  processedAt: Date | null;
  updatedAt: Date;
  attention: SupportAttention;
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
/** Shaped by the flow that owns the data; plain JSON-ready fields. */
export type SupportRecord = Record<string, unknown>;
export type SupportSubscription = SupportRecord & { history: SupportRecord[] };
export interface SupportLinkedId {
  provider: Provider;
  kind: 'customer' | 'subscription' | 'payment_intent' | 'invoice';
  id: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export interface SupportViewLimits {
  events: number;
  ledgerEntries: number;
}

/** One section of the view: reads its tables (in the view's snapshot) and returns its fields. */
export type SupportSectionReader = (
  trx: Transaction<DB>,
  userId: string,
  limits: SupportViewLimits,
) => Promise<Partial<Omit<UserSupportView, 'userId'>>>;

export const defaultSupportViewLimits: SupportViewLimits = { events: 100, ledgerEntries: 100 };

/** Wallet and ledger together, so the balance check compares numbers from one snapshot. */
export const readWalletAndLedger: SupportSectionReader = async (trx, userId, limits) => {
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

/** Inbox events naming the user, the ones needing attention first, then newest first. */
export const readEvents: SupportSectionReader = async (trx, userId, limits) => {
  const rows = await trx
    .selectFrom('inbox_events')
    .select(inboxSummaryColumns)
    .select(attentionRank.as('attention_rank'))
    .where('user_id', '=', userId)
    .orderBy('attention_rank')
    .orderBy('id', 'desc')
    .limit(limits.events)
    .execute();
  const { count } = await trx
    .selectFrom('inbox_events')
    .select(sql<string>`count(*)`.as('count'))
    .where('user_id', '=', userId)
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
  return {
    id: event.id,
    provider: event.provider,
    providerEventId: event.provider_event_id,
    type: event.type,
    livemode: event.livemode,
    environment: event.environment,
    userId: event.user_id,
    providerCustomerId: event.provider_customer_id,
    providerSubscriptionId: event.provider_subscription_id,
    providerPaymentIntentId: event.provider_payment_intent_id,
    providerInvoiceId: event.provider_invoice_id,
    status: event.status,
    attempts: event.attempts,
    lastError: event.last_error,
    outcome: event.outcome_code === null ? null : { code: event.outcome_code, detail: event.outcome_detail },
    nextAttemptAt: event.next_attempt_at,
    waitingSince: event.waiting_since,
    deferrals: event.deferrals,
    replays: event.replays,
    replayedAt: event.replayed_at,
    receivedAt: event.received_at,
    processedAt: event.processed_at,
    updatedAt: event.updated_at,
    attention,
  };
}

const linkedIdColumns = [
  ['provider_customer_id', 'customer'],
  ['provider_subscription_id', 'subscription'],
  ['provider_payment_intent_id', 'payment_intent'],
  ['provider_invoice_id', 'invoice'],
] as const;

/** Provider ids the inbox has stored with the user's events. */
export const readLinkedIds: SupportSectionReader = async (trx, userId) => {
  const linked: SupportLinkedId[] = [];
  for (const [column, kind] of linkedIdColumns) {
    const rows = await trx
      .selectFrom('inbox_events')
      .select(['provider', sql<string>`${sql.ref(column)}`.as('id')])
      .select([sql<Date>`min(received_at)`.as('first_seen_at'), sql<Date>`max(received_at)`.as('last_seen_at')])
      .where('user_id', '=', userId)
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
  return { linkedIds: linked };
};

/**
 * The readers of this build. The subscription, payments and studio flows append theirs (reading
 * their own tables) and list them here; a reader may also add to `linkedIds`.
 */
export const supportSectionReaders: readonly SupportSectionReader[] = [readWalletAndLedger, readEvents, readLinkedIds];

/**
 * The support view of one user, read in one repeatable-read, read-only transaction so every
 * section describes the same moment. A user Tally has never seen gets an empty view, not an error.
 */
export async function findUserSupportView(
  db: Kysely<DB>,
  userId: string,
  options: { limits?: Partial<SupportViewLimits>; readers?: readonly SupportSectionReader[] } = {},
): Promise<UserSupportView> {
  const limits = { ...defaultSupportViewLimits, ...options.limits };
  const readers = options.readers ?? supportSectionReaders;
  const view: UserSupportView = {
    userId,
    wallet: { balance: 0, createdAt: null },
    events: { items: [], total: 0, truncated: false },
    ledger: { entries: [], total: 0, truncated: false, sum: 0, matchesBalance: true },
    subscription: null,
    payments: [],
    studioRequests: [],
    linkedIds: [],
  };
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      for (const reader of readers) {
        const section = await reader(trx, userId, limits);
        const { linkedIds, ...rest } = section;
        Object.assign(view, rest);
        if (linkedIds) view.linkedIds.push(...linkedIds);
      }
      return view;
    });
}
