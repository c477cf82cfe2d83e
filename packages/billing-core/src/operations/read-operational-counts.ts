import { type Kysely, sql } from 'kysely';
import type { DB, Provider } from '../db/schema';
import { appleHandledEventTypes } from '../providers/apple/create-apple-handler';
import { googlePlayHandledEventTypes } from '../providers/google-play/create-google-play-handler';
import { revenueCatHandledEventTypes } from '../providers/revenuecat/create-revenuecat-handler';
import { stripeHandledEventTypes } from '../providers/stripe/create-stripe-handler';
import type { LedgerTotal, LedgerTotalsReader } from './ledger-totals';

/** Ledger reasons written by the flows (studio debits add `studio_<price key>` reasons at run time). */
export const knownLedgerReasons = [
  'token_pack_purchase',
  'token_pack_refund',
  'subscription_period',
  'subscription_annual_first_installment',
  'subscription_installment',
  'topup',
  'stripe_refund',
  'studio_refund',
] as const;
export const installmentStatuses = ['scheduled', 'processing', 'granted', 'void', 'failed'] as const;

/** Event types metrics name one by one; any other type is labelled 'other' (bounded cardinality). */
export const metricEventTypes: Record<Provider, readonly string[]> = {
  stripe: stripeHandledEventTypes,
  revenuecat: revenueCatHandledEventTypes,
  apple: appleHandledEventTypes,
  google_play: googlePlayHandledEventTypes,
};

/**
 * RevenueCat reads answered 201: RevenueCat created a customer for an id it did not know (its
 * read is get-or-create). Tally reads only ids RevenueCat sent, so this should stay at zero (a
 * customer deleted at RevenueCat and then named again by an old event would count). Both the
 * api (on-demand sync) and the worker register it.
 */
export const revenueCatCustomersCreatedMetric = {
  name: 'tally_revenuecat_customers_created_total',
  help: 'RevenueCat subscriber reads that created the customer (201): should stay 0',
} as const;

export function metricEventType(provider: Provider, type: string): string {
  return metricEventTypes[provider].includes(type) ? type : 'other';
}

export interface OperationalCounts {
  /** Every ledger entry ever, by direction and reason: entries and tokens (absolute). */
  ledger: LedgerTotal[];
  /** Inbox events parked now (status failed), by provider and type. */
  parked: { provider: Provider; type: string; count: number }[];
  studioRequests: { status: string; count: number }[];
  installments: { status: string; count: number }[];
}

/** The states of OperationalCounts: every count but the ledger totals (small status groups only). */
export type OperationalStates = Omit<OperationalCounts, 'ledger'>;

/**
 * The scrape-time reads behind the worker's database gauges. They describe the whole system (the
 * same value from every replica: aggregate with max(), never sum()) and count rows committed by
 * any process, the api's studio debits and top-up confirmations included. The ledger totals come
 * from the process's LedgerTotalsReader (the entries since its settled base, not a scan of the
 * whole ledger); the others use small status groups.
 */
export async function readOperationalCounts(
  db: Kysely<DB>,
  ledgerTotals: LedgerTotalsReader,
): Promise<OperationalCounts> {
  const [ledger, states] = await Promise.all([ledgerTotals.read(db), readOperationalStates(db)]);
  return { ledger, ...states };
}

/**
 * The states readOperationalCounts reads (parked events by type, studio requests and installments
 * by status), without the ledger totals: what the console's overview shows, with the same queries,
 * and none of them a scan of the ledger (a second or more on ten million entries).
 */
export async function readOperationalStates(db: Kysely<DB>): Promise<OperationalStates> {
  const [parked, studio, installments] = await Promise.all([
    sql<{ provider: Provider; type: string; count: string }>`
      SELECT provider, type, count(*) AS count FROM inbox_events WHERE status = 'failed' GROUP BY 1, 2`.execute(db),
    sql<{ status: string; count: string }>`SELECT status, count(*) AS count FROM studio_requests GROUP BY 1`.execute(
      db,
    ),
    sql<{
      status: string;
      count: string;
    }>`SELECT status, count(*) AS count FROM stripe_installments GROUP BY 1`.execute(db),
  ]);
  return {
    parked: parked.rows.map((row) => ({ ...row, count: Number(row.count) })),
    studioRequests: studio.rows.map((row) => ({ status: row.status, count: Number(row.count) })),
    installments: installments.rows.map((row) => ({ status: row.status, count: Number(row.count) })),
  };
}
