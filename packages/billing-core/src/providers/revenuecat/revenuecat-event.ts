import { z } from 'zod';
import { InvalidEventError } from '../../errors';
import { type InboxEventDraft, MAX_ID_LENGTH, toIndexValue } from '../../inbox/inbox-event-draft';

/**
 * The parts of a RevenueCat webhook Tally reads. RevenueCat adds fields and types without
 * notice and its own samples omit fields (app_id, environment), so everything but `id` and
 * `type` is optional and unknown fields pass through untouched.
 */
const revenueCatEventSchema = z.looseObject({
  id: z.string().trim().min(1).max(MAX_ID_LENGTH),
  type: z.string().trim().min(1).max(100),
  app_user_id: z.string().nullish(),
  original_app_user_id: z.string().nullish(),
  aliases: z.array(z.string()).nullish(),
  product_id: z.string().nullish(),
  environment: z.string().nullish(),
  purchase_environment: z.string().nullish(),
  transferred_from: z.array(z.string()).nullish(),
  transferred_to: z.array(z.string()).nullish(),
  store: z.string().nullish(),
  transaction_id: z.string().nullish(),
  event_timestamp_ms: z.number().nullish(),
});

const revenueCatWebhookSchema = z.looseObject({
  api_version: z.string().nullish(),
  event: revenueCatEventSchema,
});

export type RevenueCatEvent = z.infer<typeof revenueCatEventSchema>;

/** Parses a RevenueCat webhook body. Throws InvalidEventError naming what is missing. */
export function parseRevenueCatWebhook(rawBody: string): RevenueCatEvent {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new InvalidEventError('body is not valid JSON');
  }
  const parsed = revenueCatWebhookSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(
      `not a RevenueCat webhook: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data.event;
}

/**
 * The user an event belongs to: `app_user_id`, or for a TRANSFER (which has none) the
 * destination user, the only one RevenueCat notifies.
 */
export function revenueCatUserOf(event: RevenueCatEvent): string | null {
  return toIndexValue(event.app_user_id) ?? toIndexValue(event.transferred_to?.[0]);
}

export function toRevenueCatInboxDraft(event: RevenueCatEvent, rawBody: string): InboxEventDraft {
  const environment = toIndexValue(event.environment) ?? toIndexValue(event.purchase_environment);
  return {
    provider: 'revenuecat',
    providerEventId: event.id,
    type: event.type,
    livemode: environment === null ? null : environment === 'PRODUCTION',
    environment,
    userId: revenueCatUserOf(event),
    providerCustomerId: toIndexValue(event.original_app_user_id),
    providerSubscriptionId: null,
    providerPaymentIntentId: null,
    providerInvoiceId: null,
    rawBody,
  };
}
