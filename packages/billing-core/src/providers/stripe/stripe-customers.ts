import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema';
import { ensureWallet } from '../../ledger/ensure-wallet';

/**
 * Remembers that a Stripe customer belongs to a user (the first mapping wins; a later,
 * different one is reported, not applied). Idempotent; joins the caller's transaction.
 */
export async function rememberStripeCustomer(
  trx: Transaction<DB>,
  customerId: string | null,
  userId: string,
): Promise<{ kind: 'remembered' | 'known' | 'none' } | { kind: 'other-user'; userId: string }> {
  if (customerId === null) return { kind: 'none' };
  await ensureWallet(trx, userId);
  const inserted = await trx
    .insertInto('stripe_customers')
    .values({ customer_id: customerId, user_id: userId })
    .onConflict((oc) => oc.column('customer_id').doNothing())
    .returning('user_id')
    .executeTakeFirst();
  if (inserted) return { kind: 'remembered' };
  const existing = await findUserByStripeCustomer(trx, customerId);
  return existing === null || existing === userId ? { kind: 'known' } : { kind: 'other-user', userId: existing };
}

export async function findUserByStripeCustomer(
  db: Kysely<DB> | Transaction<DB>,
  customerId: string | null,
): Promise<string | null> {
  if (customerId === null) return null;
  const row = await db
    .selectFrom('stripe_customers')
    .select('user_id')
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row?.user_id ?? null;
}
