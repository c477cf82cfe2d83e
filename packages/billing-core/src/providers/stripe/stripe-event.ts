import { z } from 'zod';
import {
  type InboxEventDraft,
  objectAt,
  parseEventBody,
  parseJsonObject,
  toEventTypeValue,
  toIndexValue,
  toProviderEventKey,
  workerEventIdSchema,
} from '../../inbox/inbox-event-draft';
import { toPaymentEnvironment } from '../../provider-data/payment-environment';
import { invoiceSubscriptionIdOf, stripeIdOf, stripeUserOf } from '../../provider-data/stripe-objects';

/**
 * The parts of a Stripe event the worker reads. `livemode`, `account` and `data.object` stay
 * strict: an event whose environment, Connect account or object cannot be read is parked for an
 * operator rather than guessed at. Ingest does not use this schema (see toStripeInboxDraftFromBody).
 */
const stripeEventSchema = z.looseObject({
  id: workerEventIdSchema,
  object: z.literal('event').optional(),
  type: z.string().trim().min(1).max(100),
  livemode: z.boolean().nullish(),
  /** The connected account, on events Stripe delivers to a Connect platform. */
  account: z.string().nullish(),
  created: z.number().nullish().catch(undefined),
  data: z.looseObject({ object: z.looseObject({ id: z.string().nullish(), object: z.string().nullish() }) }),
});

export type StripeEvent = z.infer<typeof stripeEventSchema>;

/** Parses a Stripe event body (already verified) for the worker (parseEventBody: InvalidEventError naming the wrong field). */
export function parseStripeEvent(rawBody: string): StripeEvent {
  return parseEventBody(rawBody, stripeEventSchema, 'a Stripe event');
}

function draftOf(event: Record<string, unknown>, rawBody: string): InboxEventDraft {
  const object = objectAt(objectAt(event.data).object);
  const kind = typeof object.object === 'string' ? object.object : null;
  const ownId = toIndexValue(object.id);
  // Only a real boolean says which mode the event is from; anything else is unknown (null).
  const livemode = typeof event.livemode === 'boolean' ? event.livemode : null;
  return {
    provider: 'stripe',
    providerEventId: toProviderEventKey(event.id, 'id'),
    type: toEventTypeValue(event.type, 'type'),
    livemode,
    environment: toPaymentEnvironment(livemode),
    userId: stripeUserOf(object),
    providerCustomerId: kind === 'customer' ? ownId : stripeIdOf(object.customer),
    providerSubscriptionId:
      kind === 'subscription'
        ? ownId
        : kind === 'invoice'
          ? invoiceSubscriptionIdOf(object)
          : stripeIdOf(object.subscription),
    providerPaymentIntentId: kind === 'payment_intent' ? ownId : stripeIdOf(object.payment_intent),
    providerInvoiceId: kind === 'invoice' ? ownId : stripeIdOf(object.invoice),
    providerAccountId: toIndexValue(event.account),
    rawBody,
  };
}

/**
 * The inbox draft for a verified Stripe body, for ingest. Refuses (InvalidEventError) only what
 * cannot be stored: a body that is not a JSON object, or one without a usable `id` or `type`.
 * A missing `data.object`, an odd `livemode` or odd ids leave index columns null; the worker
 * decides about the event. The raw body is kept exactly as received.
 */
export function toStripeInboxDraftFromBody(rawBody: string): InboxEventDraft {
  return draftOf(parseJsonObject(rawBody), rawBody);
}

/** The inbox draft for an already parsed event (tests and tools that hold one). */
export function toStripeInboxDraft(event: StripeEvent, rawBody: string): InboxEventDraft {
  return draftOf(event, rawBody);
}
