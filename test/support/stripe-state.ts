import type { DB } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import { ledgerOf } from './ledger';

/** Everything Tally holds about one Stripe user, for whole-state assertions. */
export async function stripeStateOf(db: Kysely<DB>, userId: string) {
  const [wallet, ledger, payments, subscriptions, emails, customers, installments] = await Promise.all([
    db.selectFrom('wallets').select('balance').where('user_id', '=', userId).executeTakeFirst(),
    ledgerOf(db, userId),
    db
      .selectFrom('payments')
      .select([
        'provider_payment_id',
        'kind',
        'product_id',
        'amount_minor',
        'currency',
        'status',
        'ledger_reference',
        'tokens_granted',
        'tokens_refunded',
        'refund_shortfall',
      ])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('stripe_subscriptions')
      .select([
        'subscription_id',
        'customer_id',
        'plan_id',
        'price_id',
        'billing_interval',
        'status',
        'cancel_at_period_end',
      ])
      .where('user_id', '=', userId)
      .orderBy('subscription_id')
      .execute(),
    db
      .selectFrom('email_outbox')
      .innerJoin('payments', 'payments.id', 'email_outbox.payment_id')
      .select(['payments.provider_payment_id', 'email_outbox.to_address', 'email_outbox.status'])
      .where('email_outbox.user_id', '=', userId)
      .orderBy('email_outbox.id')
      .execute(),
    db
      .selectFrom('stripe_customers')
      .select('customer_id')
      .where('user_id', '=', userId)
      .orderBy('customer_id')
      .execute(),
    db
      .selectFrom('stripe_installments')
      .select(['id', 'sequence', 'tokens', 'status', 'attempts'])
      .where('user_id', '=', userId)
      .orderBy('sequence')
      .execute(),
  ]);
  return {
    balance: wallet?.balance ?? 0,
    ledger,
    payments,
    subscriptions,
    emails,
    customers: customers.map((row) => row.customer_id),
    installments,
  };
}
