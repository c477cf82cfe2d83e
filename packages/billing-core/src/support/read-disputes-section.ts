import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { toCamelCased } from '../db/to-camel-cased';
import { references } from '../references';
import type { SupportDispute, SupportSubject } from './user-support-view';

/** Stripe chargebacks of the user's payments (`stripe_disputes`), newest first, with their shortfall. */
export async function readDisputesSection(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
): Promise<SupportDispute[]> {
  const disputes = await trx
    .selectFrom('stripe_disputes')
    .innerJoin('payments', 'payments.id', 'stripe_disputes.payment_id')
    .select([
      'stripe_disputes.dispute_id',
      'payments.provider_payment_id',
      'stripe_disputes.charge_id',
      'stripe_disputes.status',
      'stripe_disputes.tokens_owed',
      'stripe_disputes.tokens_taken',
      'stripe_disputes.shortfall',
      'stripe_disputes.tokens_reinstated',
      'stripe_disputes.withdrawn_at',
      'stripe_disputes.reinstated_at',
    ])
    .where('stripe_disputes.user_id', 'in', userIds)
    .orderBy('stripe_disputes.withdrawn_at', 'desc')
    .execute();
  return disputes.map((dispute) => ({
    ...toCamelCased(dispute),
    ledgerReference: references.stripeDispute(dispute.dispute_id),
    reinstatedReference: references.stripeDisputeReinstated(dispute.dispute_id),
  }));
}
