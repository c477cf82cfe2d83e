import { type Kysely, sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { DB } from '../db/schema';
import { BillingError, NotConfiguredError } from '../errors';
import { findWallet } from '../ledger/read-wallet';
import type { StripeApi } from '../ports/stripe-api';
import { settleTopup } from './settle-topup';

// The same namespace as the inbox engine's per-user lock, so a confirm and a webhook of one
// user apply one at a time.
const USER_LOCK_NAMESPACE = 7_411_001;

export class TopupNotFoundError extends BillingError {
  constructor(reference: string) {
    super('topup_not_found', `top-up ${reference} does not exist for this user`, { retryable: false });
  }
}

/** The PaymentIntent has not succeeded (yet): the browser has not finished paying. */
export class TopupNotPaidError extends BillingError {
  constructor(
    reference: string,
    readonly paymentStatus: string,
  ) {
    super('topup_not_paid', `top-up ${reference} is not paid (payment intent ${paymentStatus})`, { retryable: true });
  }
}

/**
 * Confirms a top-up after the browser paid: retrieves the PaymentIntent (outside any
 * transaction), requires `succeeded`, then runs the pending → paid transition (settleTopup), the
 * same one `payment_intent.succeeded` runs. A second confirm, or one after the webhook, credits
 * nothing and returns the balance. Throws TopupNotFoundError, TopupNotPaidError.
 */
export async function confirmTopup(
  deps: { db: Kysely<DB>; catalog: Catalog; stripe: StripeApi | undefined },
  input: { userId: string; reference: string },
): Promise<{ reference: string; status: 'paid'; credited: boolean; balance: number }> {
  const topup = await deps.db
    .selectFrom('topups')
    .selectAll()
    .where('reference', '=', input.reference)
    .where('user_id', '=', input.userId)
    .executeTakeFirst();
  if (!topup) throw new TopupNotFoundError(input.reference);
  let credited = false;
  if (topup.status !== 'paid') {
    if (!deps.stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
    if (topup.payment_intent_id === null) throw new TopupNotPaidError(input.reference, 'not_created');
    const intent = await deps.stripe.retrievePaymentIntent(topup.payment_intent_id);
    if (intent.status !== 'succeeded') throw new TopupNotPaidError(input.reference, String(intent.status));
    const settled = await deps.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(${input.userId}))`.execute(trx);
      return settleTopup(trx, {
        reference: input.reference,
        paymentIntent: intent,
        catalog: deps.catalog,
        inboxEventId: null,
      });
    });
    credited = settled.kind === 'paid';
  }
  const wallet = await findWallet(deps.db, input.userId);
  return { reference: input.reference, status: 'paid', credited, balance: wallet.balance };
}
