import { sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { TopupRow } from '../db/schema';
import { InvalidEventError } from '../errors';
import { recordPayment } from '../payments/record-payment';
import {
  type StripeJson,
  stripeIdOf,
  stripeMetadataOf,
  stripeNumberAt,
  stripeStringAt,
} from '../provider-data/stripe-objects';
import { references } from '../references';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { attemptIdOfTopup, markAutoTopupSucceeded } from './auto-topup-top-ups';

export type SettleTopupResult =
  | { kind: 'paid'; topup: TopupRow; tokens: number }
  | { kind: 'already-paid'; topup: TopupRow }
  | { kind: 'not-found' };

/**
 * The one pending → paid transition of a top-up, shared by the confirm endpoint, the
 * `payment_intent.succeeded` webhook and auto top-up's charge (whose attempt it marks succeeded):
 * whichever commits first credits, the others find it paid.
 * The row is locked, the PaymentIntent checked against it (same intent, same user, succeeded, at
 * least the price received), then the conditional update, the payment row, the credit under
 * `stripe:payment:{paymentIntentId}` and the email row commit in the caller's transaction.
 *
 * Idempotent. Throws InvalidEventError when the intent does not match the top-up.
 */
export async function settleTopup(
  uow: UnitOfWork,
  input: { reference: string; paymentIntent: StripeJson; catalog: Catalog; inboxEventId: number | null },
): Promise<SettleTopupResult> {
  const { trx } = uow;
  const { paymentIntent } = input;
  const topup = await trx
    .selectFrom('topups')
    .selectAll()
    .where('reference', '=', input.reference)
    .forUpdate()
    .executeTakeFirst();
  if (!topup) return { kind: 'not-found' };
  if (topup.status === 'paid') return { kind: 'already-paid', topup };

  const paymentIntentId = stripeIdOf(paymentIntent.id);
  if (paymentIntentId === null) throw new InvalidEventError('payment intent without id');
  if (topup.payment_intent_id !== null && topup.payment_intent_id !== paymentIntentId) {
    throw new InvalidEventError(
      `top-up ${topup.reference} belongs to ${topup.payment_intent_id}, not ${paymentIntentId}`,
    );
  }
  if (stripeMetadataOf(paymentIntent, 'user_id') !== topup.user_id) {
    throw new InvalidEventError(`payment intent ${paymentIntentId} names another user than top-up ${topup.reference}`);
  }
  if (paymentIntent.status !== 'succeeded') {
    throw new InvalidEventError(`payment intent ${paymentIntentId} is ${String(paymentIntent.status)}, not succeeded`);
  }
  const received = stripeNumberAt(paymentIntent, 'amount_received') ?? -1;
  if (stripeStringAt(paymentIntent, 'currency') !== topup.currency || received < topup.amount_minor) {
    throw new InvalidEventError(
      `payment intent ${paymentIntentId} received ${received} ${String(paymentIntent.currency)}, top-up costs ${topup.amount_minor} ${topup.currency}`,
    );
  }
  const paid = await trx
    .updateTable('topups')
    .set({ status: 'paid', paid_at: sql`now()`, payment_intent_id: paymentIntentId, updated_at: sql`now()` })
    .where('reference', '=', topup.reference)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  if (!paid) return { kind: 'already-paid', topup };
  // An auto top-up's attempt succeeds with its top-up (docs/auto-topup.md).
  const attemptId = attemptIdOfTopup(topup.reference);
  // guard: auto-topup-settle-marks-attempt
  if (attemptId !== null) await markAutoTopupSucceeded(uow, attemptId, paymentIntentId);
  const pack = input.catalog.findTokenPackById(topup.pack_id);
  await recordPayment(uow, {
    providerPaymentId: paymentIntentId,
    userId: topup.user_id,
    kind: 'topup',
    productId: topup.pack_id,
    amountMinor: received,
    currency: topup.currency,
    ledgerReference: references.stripePayment(paymentIntentId),
    tokens: topup.tokens,
    ledgerReason: 'topup',
    lot: { category: 'purchased', expiresAt: null },
    customerEmail: stripeStringAt(paymentIntent, 'receipt_email'),
    inboxEventId: input.inboxEventId,
    email: {
      subject: 'Your top-up',
      text: `Thank you: ${topup.tokens} tokens${pack ? ` (${pack.id})` : ''} were added to your wallet.`,
    },
  });
  return { kind: 'paid', topup: paid, tokens: topup.tokens };
}
