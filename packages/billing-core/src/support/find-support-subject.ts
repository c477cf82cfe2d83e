import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { resolveUserId, userIdsOf } from '../users/link-user-ids';
import type { SupportSubject } from './user-support-view';

/**
 * Who the support view of `userId` is about, read in the view's transaction: the canonical user
 * (`resolveUserId`: the id may be an alias), every id linked to it (canonical first), and every
 * Stripe id filed under one of those ids. A user Tally has never seen is its own subject, with no
 * aliases and no Stripe ids.
 */
export async function findSupportSubject(trx: Transaction<DB>, userId: string): Promise<SupportSubject> {
  const canonicalUserId = await resolveUserId(trx, userId);
  const userIds = await userIdsOf(trx, canonicalUserId);
  return { userId: canonicalUserId, userIds, stripeIds: await stripeIdsOf(trx, userIds) };
}

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
