import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';

/** What remembering a Stripe customer's user did (rememberStripeCustomer, recordPayment's customer). */
export type RememberStripeCustomerResult =
  | { kind: 'remembered' | 'known' | 'none' }
  /** The customer was already mapped to another user; the mapping is left as it was. */
  | { kind: 'other-user'; userId: string };

/**
 * The customer mapping as CTEs another statement can carry (`mapping_inserted`, then `mapping`:
 * the customer's user and whether this statement inserted it): the first mapping wins (ON
 * CONFLICT DO NOTHING), else the one already there is read. A mapping committed by a concurrent
 * transaction after the statement's snapshot is visible to neither part: `mapping` is then
 * empty, and customerMappingOf reads it again.
 */
export function customerMappingCtes(s: { customerId: unknown; userId: unknown }) {
  return sql`mapping_inserted AS (
      INSERT INTO stripe_customers (customer_id, user_id) VALUES (${s.customerId}, ${s.userId})
      ON CONFLICT (customer_id) DO NOTHING
      RETURNING user_id),
    mapping AS (
      SELECT user_id, true AS inserted FROM mapping_inserted
      UNION ALL
      SELECT user_id, false AS inserted FROM stripe_customers
       WHERE customer_id = ${s.customerId} AND NOT EXISTS (SELECT 1 FROM mapping_inserted))`;
}

/**
 * The outcome of customerMappingCtes for `userId`: `mapped` is its `mapping` row (user and
 * whether it was inserted), or undefined when the statement saw none (then read again here).
 */
export async function customerMappingOf(
  trx: Transaction<DB>,
  customerId: string,
  userId: string,
  mapped: { user_id: string; inserted: boolean } | undefined,
): Promise<RememberStripeCustomerResult> {
  if (mapped?.inserted) return { kind: 'remembered' };
  const existing = mapped ? mapped.user_id : await findUserByStripeCustomer(trx, customerId);
  return existing === null || existing === userId ? { kind: 'known' } : { kind: 'other-user', userId: existing };
}

/** The user a Stripe customer is mapped to, or null. */
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
