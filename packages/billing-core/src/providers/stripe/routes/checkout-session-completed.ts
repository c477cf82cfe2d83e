import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { type HandlerResult, ignored, processed } from '../../../inbox/inbox-handler';
import type { ProviderPorts } from '../../../ports/provider-ports';
import {
  checkoutLinePriceIdsOf,
  type StripeJson,
  stripeIdOf,
  stripeMetadataOf,
  stripeNumberAt,
  stripeStringAt,
  stripeUserOf,
} from '../../../provider-data/stripe-objects';
import { saveStripeSubscription } from '../../../subscriptions/save-stripe-subscription';
import { defineRoute } from '../../shared/create-provider-handler';
import { rememberStripeCustomer, withCustomerMappingNote } from '../stripe-customers';
import type { StripeEvent } from '../stripe-event';
import { creditTokenPack } from './payment-intent-succeeded';

type Prepared =
  | { kind: 'unpaid' }
  /** Payment mode: the session re-read with its line items (webhooks never carry them). */
  | { kind: 'payment'; session: StripeJson }
  /** Subscription mode: the subscription as the API reports it. */
  | { kind: 'subscription'; subscription: StripeJson | null; readAt: Date };

/**
 * `checkout.session.completed` (fulfilled only when `payment_status` is `paid`; otherwise
 * `awaiting_payment` until `checkout.session.async_payment_succeeded`, which shares this route).
 * Payment mode: a token pack, credited under `stripe:payment:{paymentIntentId}` — the reference
 * `payment_intent.succeeded` uses for the same intent — with its payment and email rows.
 * Subscription mode: remembers the customer for the user and saves the subscription as the API
 * reports it; it grants nothing, because subscription credits come from paid invoices only.
 */
export function createCheckoutSessionRoute(deps: { catalog: Catalog; ports: ProviderPorts }) {
  return defineRoute<StripeEvent, Prepared>({
    async prepare(event, _row, ctx) {
      const session = event.data.object;
      if (session.payment_status !== 'paid') return { kind: 'unpaid' };
      const stripe = deps.ports.stripe;
      if (session.mode === 'subscription') {
        const subscriptionId = stripeIdOf(session.subscription);
        if (subscriptionId === null) return { kind: 'subscription', subscription: null, readAt: ctx.clock.now() };
        if (!stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
        const readAt = ctx.clock.now();
        return { kind: 'subscription', subscription: await stripe.retrieveSubscription(subscriptionId), readAt };
      }
      if (stripeMetadataOf(session, 'pack_id') !== null) return { kind: 'payment', session };
      if (!stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
      if (!session.id) throw new InvalidEventError('checkout session without id');
      return { kind: 'payment', session: await stripe.retrieveCheckoutSession(session.id) };
    },
    async apply(uow, event, prepared, row) {
      const session = event.data.object;
      if (prepared.kind === 'unpaid') {
        return ignored(
          'awaiting_payment',
          `checkout session is ${String(session.payment_status)}; waiting for payment`,
        );
      }
      const userId = stripeUserOf(session);
      if (!userId) throw new InvalidEventError('checkout session carries no client_reference_id nor metadata.user_id');
      const customerId = stripeIdOf(session.customer);
      // A pack's payment remembers the customer in its own statement (recordPayment); every other
      // outcome remembers it here first.
      const rememberedNote = async () => {
        const mapping = await rememberStripeCustomer(uow, customerId, userId);
        return (result: HandlerResult) => withCustomerMappingNote(result, mapping, customerId, userId);
      };

      if (prepared.kind === 'subscription') {
        const noted = await rememberedNote();
        if (prepared.subscription === null)
          return noted(processed('customer_remembered', 'subscription checkout without subscription'));
        const saved = await saveStripeSubscription(uow, {
          subscription: prepared.subscription,
          userId: stripeMetadataOf(prepared.subscription, 'user_id') ?? userId,
          catalog: deps.catalog,
          readAt: prepared.readAt,
        });
        return noted(
          processed(
            'subscription_synced',
            `subscription ${saved.row.subscription_id} is ${saved.row.status}; credits come from its paid invoices`,
          ),
        );
      }

      const packId =
        stripeMetadataOf(prepared.session, 'pack_id') ??
        checkoutLinePriceIdsOf(prepared.session)
          .map((priceId) => deps.catalog.findTokenPackByStripePrice(priceId)?.id)
          .find((id) => id !== undefined) ??
        null;
      if (packId === null) {
        return (await rememberedNote())(ignored('not_a_token_pack', 'checkout session sells no catalog token pack'));
      }
      const pack = deps.catalog.findTokenPackById(packId);
      if (!pack || pack.amountMinor === undefined || pack.currency === undefined) {
        throw new InvalidEventError(`checkout session names token pack ${packId}, which Stripe does not sell`);
      }
      const paymentIntentId = stripeIdOf(session.payment_intent);
      if (paymentIntentId === null) throw new InvalidEventError('paid checkout session without payment_intent');
      const amount = stripeNumberAt(session, 'amount_total') ?? -1;
      if (stripeStringAt(session, 'currency') !== pack.currency || amount < pack.amountMinor) {
        throw new InvalidEventError(
          `checkout session paid ${amount} ${String(session.currency)}, pack ${pack.id} costs ${pack.amountMinor} ${pack.currency}`,
        );
      }
      const details = session.customer_details;
      const email = details && typeof details === 'object' ? stripeStringAt(details as StripeJson, 'email') : null;
      return creditTokenPack(uow, row, {
        pack: { ...pack, currency: pack.currency },
        paymentIntentId,
        userId,
        amountMinor: amount,
        customerEmail: email,
        // guard: checkout-maps-stripe-customer
        stripeCustomerId: customerId,
      });
    },
  });
}
