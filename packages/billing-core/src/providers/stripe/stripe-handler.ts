import { InvalidEventError } from '../../errors';
import type { HandlerResult, InboxHandler } from '../../inbox/inbox-handler';
import { postLedgerEntry } from '../../ledger/post-ledger-entry';
import { references } from '../../references';
import { parseStripeEvent, type StripeEvent, stripeMetadataValue, stripeUserOf } from './stripe-event';

export const stripeHandler: InboxHandler<StripeEvent> = {
  async prepare(row) {
    return parseStripeEvent(row.raw_body);
  },

  async apply(trx, row, event, ctx): Promise<HandlerResult> {
    if (event.type === 'payment_intent.succeeded') {
      const intent = event.data.object;
      const packId = stripeMetadataValue(intent, 'pack_id');
      if (!packId) return { kind: 'ignored', outcome: 'payment intent carries no metadata.pack_id' };
      const pack = ctx.catalog.findTokenPackById(packId);
      if (!pack) throw new InvalidEventError(`payment intent names unknown token pack ${packId}`);
      const userId = stripeUserOf(intent);
      if (!userId) throw new InvalidEventError('payment intent carries no metadata.user_id');
      const paymentIntentId = intent.id;
      if (!paymentIntentId) throw new InvalidEventError('payment intent without id');
      // A pack priced in the catalog is only credited when Stripe received at least that price,
      // so a tampered or mis-built intent cannot buy tokens cheaply.
      if (pack.amountMinor !== undefined) {
        const received = typeof intent.amount_received === 'number' ? intent.amount_received : -1;
        if (intent.currency !== pack.currency || received < pack.amountMinor) {
          throw new InvalidEventError(
            `payment intent ${paymentIntentId} received ${received} ${String(intent.currency)}, pack ${pack.id} costs ${pack.amountMinor} ${pack.currency}`,
          );
        }
      }
      const posted = await postLedgerEntry(trx, {
        userId,
        reference: references.stripePayment(paymentIntentId),
        amount: pack.tokens,
        reason: 'token_pack_purchase',
        inboxEventId: row.id,
      });
      return {
        kind: 'processed',
        outcome:
          posted.kind === 'posted'
            ? `credited ${pack.tokens} tokens (${pack.id})`
            : `already credited (${posted.entry.reference})`,
      };
    }
    return { kind: 'ignored', outcome: `event type ${event.type} is not handled yet` };
  },
};
