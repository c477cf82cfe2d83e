import { z } from 'zod';
import { InvalidEventError } from '../../errors';
import { type InboxEventDraft, MAX_ID_LENGTH, toIndexValue } from '../../inbox/inbox-event-draft';

const stripeEventSchema = z.looseObject({
  id: z.string().trim().min(1).max(MAX_ID_LENGTH),
  object: z.literal('event').optional(),
  type: z.string().trim().min(1).max(100),
  livemode: z.boolean().nullish(),
  created: z.number().nullish(),
  data: z.looseObject({ object: z.looseObject({ id: z.string().nullish(), object: z.string().nullish() }) }),
});

export type StripeEvent = z.infer<typeof stripeEventSchema>;
type StripeObject = StripeEvent['data']['object'];

/** Parses a Stripe event body (already verified). Throws InvalidEventError naming what is missing. */
export function parseStripeEvent(rawBody: string): StripeEvent {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new InvalidEventError('body is not valid JSON');
  }
  const parsed = stripeEventSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(
      `not a Stripe event: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}

/** An id field that may be a string or an expanded object with an id. */
function idOf(value: unknown): string | null {
  if (typeof value === 'string') return toIndexValue(value);
  if (value && typeof value === 'object' && 'id' in value) return toIndexValue((value as { id: unknown }).id);
  return null;
}

function metadataOf(object: StripeObject): Record<string, unknown> {
  const metadata = object.metadata;
  return metadata && typeof metadata === 'object' ? (metadata as Record<string, unknown>) : {};
}

/**
 * The Tally user a Stripe object names: Checkout Sessions carry it in `client_reference_id`
 * (fallback `metadata.user_id`); PaymentIntents and Subscriptions in `metadata.user_id`.
 */
export function stripeUserOf(object: StripeObject): string | null {
  return toIndexValue(object.client_reference_id) ?? toIndexValue(metadataOf(object).user_id);
}

export function stripeMetadataValue(object: StripeObject, key: string): string | null {
  return toIndexValue(metadataOf(object)[key]);
}

/** The subscription an invoice belongs to, before and after API version 2025-03-31. */
function invoiceSubscriptionOf(object: StripeObject): string | null {
  const parent = object.parent as { subscription_details?: { subscription?: unknown } } | null | undefined;
  return idOf(parent?.subscription_details?.subscription) ?? idOf(object.subscription);
}

export function toStripeInboxDraft(event: StripeEvent, rawBody: string): InboxEventDraft {
  const object = event.data.object;
  const kind = object.object ?? null;
  const ownId = toIndexValue(object.id);
  return {
    provider: 'stripe',
    providerEventId: event.id,
    type: event.type,
    livemode: event.livemode ?? null,
    environment: event.livemode === undefined || event.livemode === null ? null : event.livemode ? 'live' : 'test',
    userId: stripeUserOf(object),
    providerCustomerId: kind === 'customer' ? ownId : idOf(object.customer),
    providerSubscriptionId:
      kind === 'subscription' ? ownId : kind === 'invoice' ? invoiceSubscriptionOf(object) : idOf(object.subscription),
    providerPaymentIntentId: kind === 'payment_intent' ? ownId : idOf(object.payment_intent),
    providerInvoiceId: kind === 'invoice' ? ownId : idOf(object.invoice),
    rawBody,
  };
}
