import type { Catalog } from '../../../catalog/catalog';
import type { TokenPack } from '../../../catalog/catalog-schema';
import type { InboxEventRow } from '../../../db/schema';
import { InvalidEventError } from '../../../errors';
import { type HandlerResult, ignored, postThen, processed } from '../../../inbox/inbox-handler';
import { recordPaymentBeforeCredit } from '../../../payments/record-payment';
import { stripeIdOf, stripeMetadataOf, stripeStringAt, stripeUserOf } from '../../../provider-data/stripe-objects';
import { references } from '../../../references';
import { settleTopup } from '../../../topups/settle-topup';
import type { UnitOfWork } from '../../../unit-of-work/unit-of-work';
import { defineRoute } from '../../shared/create-provider-handler';
import { withCustomerMappingNote } from '../stripe-customers';
import type { StripeEvent } from '../stripe-event';

/**
 * `payment_intent.succeeded`. A top-up (`metadata.topup_reference`) runs the top-up's pending →
 * paid transition, the same one the confirm endpoint runs. Another token pack
 * (`metadata.pack_id`) records its payment and credits the pack once under
 * `stripe:payment:{paymentIntentId}` — the reference Checkout uses for the same intent — only
 * when Stripe received at least the catalog price, so a tampered or mis-built intent cannot buy
 * tokens cheaply.
 */
export function createPaymentIntentSucceededRoute(deps: { catalog: Catalog }) {
  return defineRoute<StripeEvent, undefined>({
    // A pack reads only its payment's fence and hands its credit over; a top-up posts at once.
    runsAheadOfPostings: (event) => !stripeMetadataOf(event.data.object, 'topup_reference'),
    async apply(uow, event, _prepared, row) {
      const intent = event.data.object;
      const topupReference = stripeMetadataOf(intent, 'topup_reference');
      if (topupReference) {
        const settled = await settleTopup(uow, {
          reference: topupReference,
          paymentIntent: intent,
          catalog: deps.catalog,
          inboxEventId: row.id,
        });
        switch (settled.kind) {
          case 'paid':
            return processed('credited', `top-up ${topupReference} paid: credited ${settled.tokens} tokens`);
          case 'already-paid':
            return processed('already_credited', `top-up ${topupReference} was already paid`);
          case 'not-found':
            throw new InvalidEventError(`payment intent names unknown top-up ${topupReference}`);
          default: {
            const exhaustive: never = settled;
            throw new Error(`unhandled ${JSON.stringify(exhaustive)}`);
          }
        }
      }
      const packId = stripeMetadataOf(intent, 'pack_id');
      if (!packId) return ignored('not_a_token_pack', 'payment intent carries no metadata.pack_id');
      const pack = deps.catalog.findTokenPackById(packId);
      if (!pack) throw new InvalidEventError(`payment intent names unknown token pack ${packId}`);
      const userId = stripeUserOf(intent);
      if (!userId) throw new InvalidEventError('payment intent carries no metadata.user_id');
      const paymentIntentId = intent.id;
      if (!paymentIntentId) throw new InvalidEventError('payment intent without id');
      if (pack.amountMinor === undefined || pack.currency === undefined) {
        throw new InvalidEventError(`token pack ${pack.id} has no Stripe price (amountMinor, currency) in the catalog`);
      }
      const received = typeof intent.amount_received === 'number' ? intent.amount_received : -1;
      if (intent.currency !== pack.currency || received < pack.amountMinor) {
        throw new InvalidEventError(
          `payment intent ${paymentIntentId} received ${received} ${String(intent.currency)}, pack ${pack.id} costs ${pack.amountMinor} ${pack.currency}`,
        );
      }
      return creditTokenPack(uow, row, {
        pack: { ...pack, currency: pack.currency },
        paymentIntentId,
        userId,
        amountMinor: received,
        customerEmail: stripeStringAt(intent, 'receipt_email'),
        // guard: token-pack-maps-stripe-customer
        stripeCustomerId: stripeIdOf(intent.customer),
      });
    },
  });
}

/**
 * Records a paid token pack under `stripe:payment:{paymentIntentId}` (with its confirmation email,
 * and its Stripe customer remembered in the same statement: one round trip fewer) and hands its
 * credit, a purchased never-expiring lot, to the engine, which posts a batch's credits together.
 * A customer already mapped to another user is noted in the outcome.
 */
export async function creditTokenPack(
  uow: UnitOfWork,
  row: InboxEventRow,
  payment: {
    pack: TokenPack & { currency: string };
    paymentIntentId: string;
    userId: string;
    amountMinor: number;
    customerEmail: string | null;
    /** The paying Stripe customer, remembered as the user's (none: nothing is remembered). */
    stripeCustomerId?: string | null;
  },
): Promise<HandlerResult> {
  const { pack, paymentIntentId, userId, stripeCustomerId } = payment;
  const recorded = await recordPaymentBeforeCredit(uow, {
    providerPaymentId: paymentIntentId,
    userId,
    kind: 'token_pack',
    productId: pack.id,
    amountMinor: payment.amountMinor,
    currency: pack.currency,
    ledgerReference: references.stripePayment(paymentIntentId),
    tokens: pack.tokens,
    ledgerReason: 'token_pack_purchase',
    lot: { category: 'purchased', expiresAt: null },
    customerEmail: payment.customerEmail,
    inboxEventId: row.id,
    email: tokenPackEmail(pack.tokens),
    stripeCustomerId,
  });
  return withCustomerMappingNote(
    postThen(recorded.credit, (posted) =>
      posted.kind === 'posted'
        ? processed('credited', `credited ${pack.tokens} tokens (${pack.id})`)
        : processed('already_credited', `already credited (${posted.entry.reference})`),
    ),
    recorded.customer,
    stripeCustomerId ?? null,
    userId,
  );
}

export function tokenPackEmail(tokens: number): { subject: string; text: string } {
  return { subject: 'Your token purchase', text: `Thank you: ${tokens} tokens were added to your wallet.` };
}
