import type { Catalog } from '../../../catalog/catalog';
import { InvalidEventError } from '../../../errors';
import { ignored, processed } from '../../../inbox/inbox-handler';
import { postLedgerEntry } from '../../../ledger/post-ledger-entry';
import { references } from '../../../references';
import { defineRoute } from '../../shared/create-provider-handler';
import { type StripeEvent, stripeMetadataValue, stripeUserOf } from '../stripe-event';

/**
 * `payment_intent.succeeded` of a token pack (`metadata.pack_id`): credits the pack once under
 * `stripe:payment:{paymentIntentId}`, only when Stripe received at least the catalog price, so a
 * tampered or mis-built intent cannot buy tokens cheaply.
 */
export function createPaymentIntentSucceededRoute(deps: { catalog: Catalog }) {
  return defineRoute<StripeEvent, undefined>({
    async apply(trx, event, _prepared, row) {
      const intent = event.data.object;
      const packId = stripeMetadataValue(intent, 'pack_id');
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
      const posted = await postLedgerEntry(trx, {
        userId,
        reference: references.stripePayment(paymentIntentId),
        amount: pack.tokens,
        reason: 'token_pack_purchase',
        inboxEventId: row.id,
      });
      return posted.kind === 'posted'
        ? processed('credited', `credited ${pack.tokens} tokens (${pack.id})`)
        : processed('already_credited', `already credited (${posted.entry.reference})`);
    },
  });
}
