import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import type { ProcessedOutcomeCode } from '../inbox/outcome-codes';
import type { StripeHandledEventType } from '../providers/stripe/create-stripe-handler';
import { referencePrefixes } from '../references';

export interface EventWithoutRows {
  inboxEventId: number;
  eventId: string;
  type: string;
  outcomeCode: string | null;
  /** What the event's outcome says should exist and does not. */
  missing: string[];
}

/** Outcome codes with which a Stripe event says it granted (or found already granted) a payment's tokens. */
const creditCodes: ProcessedOutcomeCode[] = ['credited', 'already_credited'];
const refundCode: ProcessedOutcomeCode = 'refunded';
const paymentTypes: StripeHandledEventType[] = [
  'payment_intent.succeeded',
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
];
const invoiceType: StripeHandledEventType = 'invoice.paid';
const refundType: StripeHandledEventType = 'charge.refunded';
const subscriptionTypes: StripeHandledEventType[] = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
];

/**
 * Reconciliation's second job: processed Stripe events (received since `windowStart`) whose
 * outcome promises rows that are not there. A payment event (`payment_intent.succeeded`,
 * `checkout.session.*`) or `invoice.paid` whose outcome is credited/already_credited must have its
 * ledger entry (`stripe:payment:{pi}` / `stripe:invoice:{id}`) and its `payments` row; a
 * `charge.refunded` with outcome refunded a payments row marked refunded; a
 * `customer.subscription.*` its `stripe_subscriptions` row. At most `limit` rows. Read only.
 */
export async function findStripeEventsWithoutRows(
  db: Kysely<DB>,
  windowStart: Date,
  limit: number,
): Promise<EventWithoutRows[]> {
  // guard: reconcile-ledger-entry-check
  const result = await sql<{
    id: number;
    provider_event_id: string;
    type: string;
    outcome_code: string | null;
    no_ids: boolean;
    ledger_missing: string | null;
    payment_missing: string | null;
    refund_missing: string | null;
    subscription_missing: string | null;
  }>`
    WITH candidates AS (
      SELECT i.id, i.provider_event_id, i.type, i.outcome_code,
             CASE
               WHEN i.type = ANY(${paymentTypes}) AND i.outcome_code = ANY(${creditCodes})
                 THEN 'payment'
               WHEN i.type = ${invoiceType} AND i.outcome_code = ANY(${creditCodes}) THEN 'invoice'
               WHEN i.type = ${refundType} AND i.outcome_code = ${refundCode} THEN 'refund'
               WHEN i.type = ANY(${subscriptionTypes}) THEN 'subscription'
             END AS kind,
             CASE
               WHEN i.type = ANY(${paymentTypes}) OR i.type = ${refundType} THEN i.provider_payment_intent_id
               WHEN i.type = ${invoiceType} THEN i.provider_invoice_id
               ELSE i.provider_subscription_id
             END AS object_id
        FROM inbox_events i
       WHERE i.provider = 'stripe' AND i.status = 'processed' AND i.received_at >= ${windowStart}
    ),
    expected AS (
      SELECT c.*,
             CASE c.kind
               WHEN 'payment' THEN ${referencePrefixes.stripePayment}::text || c.object_id
               WHEN 'invoice' THEN ${referencePrefixes.stripeInvoice}::text || c.object_id
             END AS reference
        FROM candidates c
       WHERE c.kind IS NOT NULL
    )
    SELECT e.id, e.provider_event_id, e.type, e.outcome_code,
           e.object_id IS NULL AS no_ids,
           CASE WHEN e.reference IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM ledger_entries l WHERE l.reference = e.reference)
                THEN e.reference END
             AS ledger_missing,
           CASE WHEN e.kind IN ('payment', 'invoice') AND e.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM payments p WHERE p.provider = 'stripe' AND p.provider_payment_id = e.object_id)
                THEN e.object_id END AS payment_missing,
           CASE WHEN e.kind = 'refund' AND e.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM payments p
                   WHERE p.provider = 'stripe' AND p.provider_payment_id = e.object_id AND p.status = 'refunded')
                THEN e.object_id END AS refund_missing,
           CASE WHEN e.kind = 'subscription' AND e.object_id IS NOT NULL AND NOT EXISTS (
                  SELECT 1 FROM stripe_subscriptions s WHERE s.subscription_id = e.object_id)
                THEN e.object_id END AS subscription_missing
      FROM expected e
     ORDER BY e.id
  `.execute(db);
  const found: EventWithoutRows[] = [];
  for (const row of result.rows) {
    const missing: string[] = [];
    if (row.no_ids) missing.push('the event names no object id to check');
    if (row.ledger_missing) missing.push(`ledger entry ${row.ledger_missing}`);
    if (row.payment_missing) missing.push(`payments row for ${row.payment_missing}`);
    if (row.refund_missing) missing.push(`refunded payments row for ${row.refund_missing}`);
    if (row.subscription_missing) missing.push(`stripe_subscriptions row ${row.subscription_missing}`);
    if (missing.length === 0) continue;
    found.push({
      inboxEventId: Number(row.id),
      eventId: row.provider_event_id,
      type: row.type,
      outcomeCode: row.outcome_code,
      missing,
    });
    if (found.length >= limit) break;
  }
  return found;
}
