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

/** A list of ids where only the strings matter; RevenueCat has sent nulls in such lists. */
const stringList = z
  .array(z.unknown())
  .transform((values) => values.filter((value): value is string => typeof value === 'string'));

/** Tolerated when odd: nothing Tally decides depends on it, so a bad value reads as absent. */
const optionalString = z.string().nullish().catch(undefined);

/**
 * The parts of a RevenueCat webhook the worker reads. RevenueCat adds fields and types without
 * notice and its own samples omit fields (app_id, environment), so everything but `id` and
 * `type` is optional and unknown fields pass through untouched. Fields that decide money or
 * whose plan applies (app_user_id, product_id, environment) stay strict: an odd value fails the
 * parse and the worker parks the event for an operator. Fields nothing depends on are lenient.
 */
const revenueCatEventSchema = z.looseObject({
  id: workerEventIdSchema,
  type: z.string().trim().min(1).max(100),
  app_user_id: z.string().nullish(),
  original_app_user_id: optionalString,
  aliases: stringList.nullish().catch(undefined),
  product_id: z.string().nullish(),
  environment: z.string().nullish(),
  purchase_environment: z.string().nullish(),
  transferred_from: stringList.nullish(),
  transferred_to: stringList.nullish(),
  store: optionalString,
  transaction_id: optionalString,
  // Documented as a number; a string of digits is read as one, anything else as absent.
  event_timestamp_ms: z
    .union([
      z.number(),
      z
        .string()
        .regex(/^\d{1,16}$/)
        .transform(Number),
    ])
    .nullish()
    .catch(undefined),
});

const revenueCatWebhookSchema = z.looseObject({
  api_version: optionalString,
  event: revenueCatEventSchema,
});

export type RevenueCatEvent = z.infer<typeof revenueCatEventSchema>;

/** Parses a RevenueCat webhook body for the worker (parseEventBody: InvalidEventError naming the wrong field). */
export function parseRevenueCatWebhook(rawBody: string): RevenueCatEvent {
  return parseEventBody(rawBody, revenueCatWebhookSchema, 'a RevenueCat webhook').event;
}

/**
 * The user an event belongs to: `app_user_id`, or for a TRANSFER (which has none) the
 * destination user, the only one RevenueCat notifies. Null when none is a usable id.
 */
export function revenueCatUserOf(event: RevenueCatEvent): string | null {
  return userOf(event);
}

function userOf(event: Record<string, unknown>): string | null {
  const transferredTo = event.transferred_to;
  return toIndexValue(event.app_user_id) ?? (Array.isArray(transferredTo) ? toIndexValue(transferredTo[0]) : null);
}

/**
 * RevenueCat's environment in upper case as documented (PRODUCTION | SANDBOX), read from
 * `environment` or, as some of RevenueCat's own samples have it, `purchase_environment`.
 */
function environmentOf(event: Record<string, unknown>): string | null {
  return (toIndexValue(event.environment) ?? toIndexValue(event.purchase_environment))?.toUpperCase() ?? null;
}

function draftOf(event: Record<string, unknown>, rawBody: string): InboxEventDraft {
  const environment = environmentOf(event);
  const livemode = environment === null ? null : environment === 'PRODUCTION';
  return {
    provider: 'revenuecat',
    providerEventId: toProviderEventKey(event.id, 'event.id'),
    type: toEventTypeValue(event.type, 'event.type'),
    livemode,
    environment: toPaymentEnvironment(livemode),
    userId: userOf(event),
    providerCustomerId: toIndexValue(event.original_app_user_id),
    providerSubscriptionId: null,
    providerPaymentIntentId: null,
    providerInvoiceId: null,
    rawBody,
  };
}

/**
 * The inbox draft for an authenticated RevenueCat body, for ingest. Refuses (InvalidEventError)
 * only what cannot be stored: a body that is not a JSON object, or an `event` without a usable
 * `id` or `type`. Every other field is read leniently: an odd value leaves its index column null
 * and the worker decides about the event. The raw body is kept exactly as received.
 */
export function toRevenueCatInboxDraftFromBody(rawBody: string): InboxEventDraft {
  return draftOf(objectAt(parseJsonObject(rawBody).event), rawBody);
}

/** The inbox draft for an already parsed event (tests and tools that hold one). */
export function toRevenueCatInboxDraft(event: RevenueCatEvent, rawBody: string): InboxEventDraft {
  return draftOf(event, rawBody);
}
