import { precompiledSql } from '@tally/platform/db';
import { sql } from 'kysely';
import type { FinishedResult, HandlerResult } from '../../inbox/inbox-handler';
import { ensureWalletCtes, markWalletEnsured } from '../../ledger/ensure-wallet';
import {
  customerMappingCtes,
  customerMappingOf,
  type RememberStripeCustomerResult,
} from '../../payments/stripe-customer-mapping';
import type { UnitOfWork } from '../../unit-of-work/unit-of-work';

export { findUserByStripeCustomer, type RememberStripeCustomerResult } from '../../payments/stripe-customer-mapping';

/**
 * Remembers that a Stripe customer belongs to a user (the first mapping wins; a later,
 * different one is not applied but returned as `other-user`, for the caller to report with
 * withCustomerMappingNote). Idempotent; joins the caller's transaction. A payment remembers its
 * customer in its own statement instead (recordPayment's `stripeCustomerId`).
 */
export async function rememberStripeCustomer(
  uow: UnitOfWork,
  customerId: string | null,
  userId: string,
): Promise<RememberStripeCustomerResult> {
  if (customerId === null) return { kind: 'none' };
  // One round trip: the user and an empty wallet if they do not exist yet (what ensureWallet
  // does; the foreign keys are checked at the end of the statement), then the mapping.
  const rows = await rememberSql(uow.trx, { customerId, userId });
  markWalletEnsured(uow, userId);
  return customerMappingOf(uow.trx, customerId, userId, rows.rows[0]);
}

/** rememberStripeCustomer's statement, compiled once (db/precompiled-sql.ts). */
const rememberSql = precompiledSql<{ customerId: string; userId: string }, { user_id: string; inserted: boolean }>(
  (s) => sql`
    WITH ${ensureWalletCtes(s.userId)},
    ${customerMappingCtes(s)}
    SELECT user_id, inserted FROM mapping`,
);

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
  const note = (finished: FinishedResult): FinishedResult => ({
    ...finished,
    detail: `${finished.detail}; customer ${customerId} stays mapped to user ${mapping.userId}, not ${userId}`,
  });
  if (result.kind === 'post') return { ...result, finish: (posted) => note(result.finish(posted)) };
  return note(result);
}
