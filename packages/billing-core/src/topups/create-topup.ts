import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { DB } from '../db/schema';
import { BillingError, NotConfiguredError } from '../errors';
import { ensureWallet } from '../ledger/ensure-wallet';
import type { StripeApi } from '../ports/stripe-api';
import { stripeStringAt } from '../provider-data/stripe-objects';

/** The pack asked for does not exist or cannot be sold through Stripe. */
export class UnknownTokenPackError extends BillingError {
  constructor(packId: string) {
    super('unknown_pack', `token pack ${packId} is not sold through Stripe`, { retryable: false });
  }
}

/** A fresh top-up reference: `tu_` and 24 random hex characters. */
export function newTopupReference(): string {
  return `tu_${randomBytes(12).toString('hex')}`;
}

/**
 * Starts a top-up: a pending row with a generated reference is committed first, then a Stripe
 * PaymentIntent is created (outside any transaction) carrying user_id, pack_id and
 * topup_reference in its metadata, with the idempotency key `topup-{reference}` so a retried
 * create returns the same intent. Returns what the browser needs to pay. `userId` is the
 * canonical user (resolveUserId): the row, the intent's metadata and so the credit are its.
 */
export async function createTopup(
  deps: { db: Kysely<DB>; catalog: Catalog; stripe: StripeApi | undefined },
  input: { userId: string; packId: string },
): Promise<{ reference: string; clientSecret: string; status: 'pending'; paymentIntentId: string }> {
  if (!deps.stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
  const pack = deps.catalog.findTokenPackById(input.packId);
  if (!pack || pack.amountMinor === undefined || pack.currency === undefined)
    throw new UnknownTokenPackError(input.packId);
  const reference = newTopupReference();
  await deps.db.transaction().execute(async (trx) => {
    await ensureWallet(trx, input.userId);
    await trx
      .insertInto('topups')
      .values({
        reference,
        user_id: input.userId,
        pack_id: pack.id,
        tokens: pack.tokens,
        amount_minor: pack.amountMinor as number,
        currency: pack.currency as string,
      })
      .execute();
  });
  const intent = await deps.stripe.createPaymentIntent(
    {
      amountMinor: pack.amountMinor,
      currency: pack.currency,
      metadata: { user_id: input.userId, pack_id: pack.id, topup_reference: reference },
      description: `Tally top-up ${reference}`,
    },
    { idempotencyKey: `topup-${reference}` },
  );
  const paymentIntentId = stripeStringAt(intent, 'id');
  const clientSecret = stripeStringAt(intent, 'client_secret');
  if (paymentIntentId === null || clientSecret === null)
    throw new Error('Stripe returned a payment intent without id or client secret');
  await deps.db
    .updateTable('topups')
    .set({ payment_intent_id: paymentIntentId, updated_at: sql`now()` })
    .where('reference', '=', reference)
    .where('payment_intent_id', 'is', null)
    .execute();
  return { reference, clientSecret, status: 'pending', paymentIntentId };
}
