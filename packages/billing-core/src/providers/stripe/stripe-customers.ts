import { precompiledSql } from '@tally/platform/db';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema';
import type { HandlerResult } from '../../inbox/inbox-handler';
import { ensureWalletCtes, markWalletEnsured } from '../../ledger/ensure-wallet';
import type { UnitOfWork } from '../../unit-of-work/unit-of-work';

export type RememberStripeCustomerResult =
  | { kind: 'remembered' | 'known' | 'none' }
  /** The customer was already mapped to another user; the mapping is left as it was. */
  | { kind: 'other-user'; userId: string };

/**
 * Remembers that a Stripe customer belongs to a user (the first mapping wins; a later,
 * different one is not applied but returned as `other-user`, for the caller to report with
 * withCustomerMappingNote). Idempotent; joins the caller's transaction.
 */
export async function rememberStripeCustomer(
  uow: UnitOfWork,
  customerId: string | null,
  userId: string,
): Promise<RememberStripeCustomerResult> {
  const { trx } = uow;
  if (customerId === null) return { kind: 'none' };
  // One round trip: the user and an empty wallet if they do not exist yet (what ensureWallet
  // does; the foreign keys are checked at the end of the statement), then the mapping inserted,
  // or the one already there read. A mapping committed by a concurrent transaction after this
  // statement's snapshot is not visible to its SELECT; then neither part returns a row and it is
  // read again below.
  const rows = await rememberSql(trx, { customerId, userId });
  markWalletEnsured(uow, userId);
  const row = rows.rows[0];
  if (row?.inserted) return { kind: 'remembered' };
  const existing = row ? row.user_id : await findUserByStripeCustomer(trx, customerId);
  return existing === null || existing === userId ? { kind: 'known' } : { kind: 'other-user', userId: existing };
}

/** rememberStripeCustomer's statement, compiled once (db/precompiled-sql.ts): one per Stripe payment. */
const rememberSql = precompiledSql<{ customerId: string; userId: string }, { user_id: string; inserted: boolean }>(
  (s) => sql`
    WITH ${ensureWalletCtes(s.userId)},
    inserted AS (
      INSERT INTO stripe_customers (customer_id, user_id) VALUES (${s.customerId}, ${s.userId})
      ON CONFLICT (customer_id) DO NOTHING
      RETURNING user_id)
    SELECT user_id, true AS inserted FROM inserted
    UNION ALL
    SELECT user_id, false AS inserted FROM stripe_customers
     WHERE customer_id = ${s.customerId} AND NOT EXISTS (SELECT 1 FROM inserted)`,
);

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

/**
 * An event's outcome with a customer-mapping conflict appended to its detail, so support sees
 * (in the event's outcome, filterable by text) that the customer stays mapped to its first user
 * while this event named another. Ids only, never a name or an address. Unchanged otherwise.
 */
export function withCustomerMappingNote(
  result: HandlerResult,
  mapping: RememberStripeCustomerResult,
  customerId: string | null,
  userId: string,
): HandlerResult {
  if (mapping.kind !== 'other-user' || result.kind === 'retry-later') return result;
  return {
    ...result,
    detail: `${result.detail}; customer ${customerId} stays mapped to user ${mapping.userId}, not ${userId}`,
  };
}
