import type { Catalog } from '../catalog/catalog';
import { BillingError, NotConfiguredError } from '../errors';
import { findWallet } from '../ledger/read-wallet';
import type { StripeApi } from '../ports/stripe-api';
import { inUnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { belongsToUser } from '../users/link-user-ids';
import { lockUser } from '../users/lock-user';
import { settleTopup } from './settle-topup';

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
 * nothing and returns the balance of the wallet it credits. `userId` is the canonical user
 * (resolveUserId); a top-up filed under an id linked to it (started before the link) is its too.
 * The settle runs under the per-user lock of the user the top-up credits (its row's `user_id`,
 * the intent's `metadata.user_id`): the lock the inbox engine takes for the webhook, so a confirm
 * and the webhook apply one at a time.
 * Throws TopupNotFoundError, TopupNotPaidError.
 */
export async function confirmTopup(
  deps: UnitOfWorkDeps & { catalog: Catalog; stripe: StripeApi | undefined },
  input: { userId: string; reference: string },
): Promise<{ reference: string; status: 'paid'; credited: boolean; balance: number }> {
  const topup = await deps.db
    .selectFrom('topups')
    .selectAll()
    .where('reference', '=', input.reference)
    .executeTakeFirst();
  if (!topup || !(await belongsToUser(deps.db, topup.user_id, input.userId))) {
    throw new TopupNotFoundError(input.reference);
  }
  let credited = false;
  if (topup.status !== 'paid') {
    if (!deps.stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
    if (topup.payment_intent_id === null) throw new TopupNotPaidError(input.reference, 'not_created');
    const intent = await deps.stripe.retrievePaymentIntent(topup.payment_intent_id);
    if (intent.status !== 'succeeded') throw new TopupNotPaidError(input.reference, String(intent.status));
    const settled = await inUnitOfWork(deps, async (uow) => {
      const { trx } = uow;
      await lockUser(trx, topup.user_id);
      return settleTopup(uow, {
        reference: input.reference,
        paymentIntent: intent,
        catalog: deps.catalog,
        inboxEventId: null,
      });
    });
    credited = settled.kind === 'paid';
  }
  // The wallet the top-up credits: the user's own, or for a top-up started under an id before
  // RevenueCat linked it, that id's (links never move tokens between wallets).
  const wallet = await findWallet(deps.db, topup.user_id);
  return { reference: input.reference, status: 'paid', credited, balance: wallet.balance };
}
