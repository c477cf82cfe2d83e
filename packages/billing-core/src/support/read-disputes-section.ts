import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { references } from '../references';
import type { SupportDispute, SupportSubject } from './user-support-view';

/** Stripe chargebacks of the user's payments (`stripe_disputes`), newest first, with their shortfall. */
export async function readDisputesSection(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
): Promise<SupportDispute[]> {
  const rows = await trx
    .selectFrom('stripe_disputes')
    .innerJoin('payments', 'payments.id', 'stripe_disputes.payment_id')
    .selectAll('stripe_disputes')
    .select('payments.provider_payment_id')
    .where('stripe_disputes.user_id', 'in', userIds)
    .orderBy('stripe_disputes.withdrawn_at', 'desc')
    .execute();
  return rows.map((row) => ({
    disputeId: row.dispute_id,
    providerPaymentId: row.provider_payment_id,
    chargeId: row.charge_id,
    status: row.status,
    tokensOwed: row.tokens_owed,
    tokensTaken: row.tokens_taken,
    shortfall: row.shortfall,
    tokensReinstated: row.tokens_reinstated,
    withdrawnAt: row.withdrawn_at,
    reinstatedAt: row.reinstated_at,
    ledgerReference: references.stripeDispute(row.dispute_id),
    reinstatedReference: references.stripeDisputeReinstated(row.dispute_id),
  }));
}
