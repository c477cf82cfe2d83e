import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { referencePrefixes } from '../references';

export interface LedgerRowWithoutEvent {
  ledgerEntryId: number;
  reference: string;
  userId: string;
  amount: number;
  createdAt: string;
}

const { stripe, stripePayment, stripeInvoice, stripeInstallment } = referencePrefixes;

/**
 * Reconciliation's third job: `stripe:*` ledger rows created in `[windowStart, olderThan)` that no
 * inbox event accounts for: `stripe:payment:{pi}` with no inbox event naming that payment intent,
 * `stripe:invoice:{id}` with no inbox event naming that invoice, `stripe:refund:*` not linked to an
 * event. (`stripe:installment:*` rows come from the installments schedule, not from an event.)
 * `olderThan` leaves out rows whose webhook may still be in flight. At most `limit` rows. Read only.
 *
 * The window is found through `ledger_entries_created_brin` (migration 0023), and the three ways
 * an event accounts for a row are three conditions, the usual one first: a row linked to its
 * event costs one primary-key probe, and only a row that is not probes the payment-intent and
 * invoice indexes (one `OR` of the three made every row probe all three).
 */
export async function findStripeLedgerRowsWithoutEvent(
  db: Kysely<DB>,
  windowStart: Date,
  olderThan: Date,
  limit: number,
): Promise<LedgerRowWithoutEvent[]> {
  // guard: reconcile-stripe-rows
  // guard: reconcile-row-by-event
  // guard: reconcile-row-by-invoice
  const result = await sql<{ id: number; reference: string; user_id: string; amount: number; created_at: Date }>`
    SELECT l.id, l.reference, l.user_id, l.amount, l.created_at
      FROM ledger_entries l
     WHERE starts_with(l.reference, ${stripe})
       AND NOT starts_with(l.reference, ${stripeInstallment})
       AND l.created_at >= ${windowStart}
       AND l.created_at < ${olderThan}
       AND NOT EXISTS (SELECT 1 FROM inbox_events i WHERE i.id = l.inbox_event_id AND i.provider = 'stripe')
       AND NOT (starts_with(l.reference, ${stripePayment}) AND EXISTS (
         SELECT 1 FROM inbox_events i
          WHERE i.provider = 'stripe' AND i.provider_payment_intent_id = substr(l.reference, ${stripePayment.length + 1}::int)))
       AND NOT (starts_with(l.reference, ${stripeInvoice}) AND EXISTS (
         SELECT 1 FROM inbox_events i
          WHERE i.provider = 'stripe' AND i.provider_invoice_id = substr(l.reference, ${stripeInvoice.length + 1}::int)))
     ORDER BY l.id
     LIMIT ${limit}
  `.execute(db);
  return result.rows.map((row) => ({
    ledgerEntryId: Number(row.id),
    reference: row.reference,
    userId: row.user_id,
    amount: Number(row.amount),
    createdAt: row.created_at.toISOString(),
  }));
}
