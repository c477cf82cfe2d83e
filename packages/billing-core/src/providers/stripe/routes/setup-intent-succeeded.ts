import { saveSetupIntent } from '../../../auto-topup/payment-methods';
import { InvalidEventError } from '../../../errors';
import { ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { stripeIdOf, stripeMetadataOf, stripeStringAt } from '../../../provider-data/stripe-objects';
import { defineRoute } from '../../shared/create-provider-handler';
import { findUserByStripeCustomer } from '../stripe-customers';
import type { StripeEvent } from '../stripe-event';

/**
 * `setup_intent.succeeded` (docs/auto-topup.md): the app confirmed the SetupIntent Tally made
 * (`POST …/payment-methods/setup`) with Stripe.js; its payment method becomes the user's card for
 * auto top-up. The user is `metadata.user_id`, else the user its customer was seen with (a setup
 * whose user is not known yet waits). Only an off-session setup is saved.
 */
export const setupIntentSucceededRoute = defineRoute<StripeEvent, undefined>({
  async apply(uow, event) {
    const intent = event.data.object;
    const setupIntentId = stripeIdOf(intent.id);
    const customerId = stripeIdOf(intent.customer);
    const paymentMethodId = stripeIdOf(intent.payment_method);
    if (setupIntentId === null || customerId === null || paymentMethodId === null) {
      throw new InvalidEventError('setup intent without id, customer or payment method');
    }
    const userId = stripeMetadataOf(intent, 'user_id') ?? (await findUserByStripeCustomer(uow.trx, customerId));
    if (userId === null)
      return retryLater(`the user of setup intent ${setupIntentId} (customer ${customerId}) is not known yet`);
    const saved = await saveSetupIntent(uow, {
      userId,
      setupIntentId,
      customerId,
      paymentMethodId,
      usage: stripeStringAt(intent, 'usage'),
    });
    if (saved.kind === 'not-off-session') {
      return ignored('setup_not_off_session', `setup intent ${setupIntentId} is not for off-session use`);
    }
    return processed('payment_method_saved', `saved payment method ${paymentMethodId} of customer ${customerId}`);
  },
});
