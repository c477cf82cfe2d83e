import { z } from 'zod';
import { InvalidEventError } from '../../errors';
import {
  type InboxEventDraft,
  objectAt,
  parseEventBody,
  parseJsonObject,
  toIndexValue,
  toProviderEventKey,
  workerEventIdSchema,
} from '../../inbox/inbox-event-draft';

/**
 * Google Play's real-time developer notifications as Cloud Pub/Sub pushes them
 * (docs/stores-google-play.md): `{"message": {"data": <base64 JSON>, "messageId", "publishTime",
 * "attributes"}, "subscription"}`. The inbox stores the push body as received, under
 * (google_play, message.messageId); the worker decodes `data` again from it.
 */

/** The subscription notification types Google documents, by number (others are `SUBSCRIPTION_OTHER`). */
export const googlePlaySubscriptionNotificationTypes: Readonly<Record<number, string>> = {
  1: 'SUBSCRIPTION_RECOVERED',
  2: 'SUBSCRIPTION_RENEWED',
  3: 'SUBSCRIPTION_CANCELED',
  4: 'SUBSCRIPTION_PURCHASED',
  5: 'SUBSCRIPTION_ON_HOLD',
  6: 'SUBSCRIPTION_IN_GRACE_PERIOD',
  7: 'SUBSCRIPTION_RESTARTED',
  8: 'SUBSCRIPTION_PRICE_CHANGE_CONFIRMED',
  9: 'SUBSCRIPTION_DEFERRED',
  10: 'SUBSCRIPTION_PAUSED',
  11: 'SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED',
  12: 'SUBSCRIPTION_REVOKED',
  13: 'SUBSCRIPTION_EXPIRED',
  17: 'SUBSCRIPTION_ITEMS_CHANGED',
  18: 'SUBSCRIPTION_CANCELLATION_SCHEDULED',
  19: 'SUBSCRIPTION_PRICE_CHANGE_UPDATED',
  20: 'SUBSCRIPTION_PENDING_PURCHASE_CANCELED',
  22: 'SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED',
};

/** The one-time product types: 1 PURCHASED, 2 CANCELED (a pending purchase the user canceled). */
export const googlePlayOneTimeNotificationTypes: Readonly<Record<number, string>> = {
  1: 'ONE_TIME_PRODUCT_PURCHASED',
  2: 'ONE_TIME_PRODUCT_CANCELED',
};

export const googlePlayVoidedType = 'VOIDED_PURCHASE';
export const googlePlayTestType = 'TEST_NOTIFICATION';

/** The inbox type names Tally gives Google's notifications (metrics label these by name). */
export const googlePlayEventTypes: readonly string[] = [
  ...Object.values(googlePlayOneTimeNotificationTypes),
  ...Object.values(googlePlaySubscriptionNotificationTypes),
  googlePlayVoidedType,
  googlePlayTestType,
];

const text = z.string().trim().min(1).max(4096);
const notificationType = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^\d{1,4}$/)
    .transform(Number),
]);

/** The decoded `data`: the fields that decide money are strict, the rest pass through. */
const developerNotificationSchema = z.looseObject({
  version: z.string().nullish(),
  packageName: z.string().trim().min(1).max(255),
  eventTimeMillis: z.union([z.string(), z.number()]).nullish(),
  oneTimeProductNotification: z
    .looseObject({ notificationType, purchaseToken: text, sku: z.string().trim().min(1).max(255) })
    .nullish(),
  subscriptionNotification: z
    .looseObject({ notificationType, purchaseToken: text, subscriptionId: z.string().nullish() })
    .nullish(),
  voidedPurchaseNotification: z
    .looseObject({
      purchaseToken: text,
      orderId: z.string().trim().min(1).max(255),
      productType: notificationType.nullish(),
      refundType: notificationType.nullish(),
    })
    .nullish(),
  testNotification: z.looseObject({}).nullish(),
});

export type GooglePlayDeveloperNotification = z.infer<typeof developerNotificationSchema>;

const pushSchema = z.looseObject({
  message: z.looseObject({
    data: z.string().min(1),
    messageId: workerEventIdSchema.optional(),
    message_id: workerEventIdSchema.optional(),
    publishTime: z.string().nullish(),
  }),
  subscription: z.string().nullish(),
});

/** A parsed push: its message id, its inbox type and the decoded notification. */
export interface GooglePlayEvent {
  messageId: string;
  type: string;
  notification: GooglePlayDeveloperNotification;
}

/** The inbox type of a decoded notification (what the routing table is keyed by). */
export function googlePlayTypeOf(notification: Record<string, unknown>): string {
  const oneTime = objectAt(notification.oneTimeProductNotification);
  if (notification.oneTimeProductNotification) {
    return googlePlayOneTimeNotificationTypes[Number(oneTime.notificationType)] ?? 'ONE_TIME_PRODUCT_OTHER';
  }
  const subscription = objectAt(notification.subscriptionNotification);
  if (notification.subscriptionNotification) {
    return googlePlaySubscriptionNotificationTypes[Number(subscription.notificationType)] ?? 'SUBSCRIPTION_OTHER';
  }
  if (notification.voidedPurchaseNotification) return googlePlayVoidedType;
  if (notification.testNotification) return googlePlayTestType;
  return 'OTHER';
}

/** `message.data` decoded (standard or URL-safe base64) and parsed as a JSON object; InvalidEventError otherwise. */
function decodeData(data: unknown): Record<string, unknown> {
  if (typeof data !== 'string' || data.length === 0) throw new InvalidEventError('message.data is missing');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(data)) throw new InvalidEventError('message.data is not base64');
  try {
    return parseJsonObject(Buffer.from(data, 'base64').toString('utf8'));
  } catch {
    throw new InvalidEventError('message.data is not a base64 JSON object');
  }
}

/** Parses a stored push body for the worker (InvalidEventError naming the wrong field: the row parks). */
export function parseGooglePlayPush(rawBody: string): GooglePlayEvent {
  const push = parseEventBody(rawBody, pushSchema, 'a Pub/Sub push');
  const messageId = push.message.messageId ?? push.message.message_id;
  if (messageId === undefined) throw new InvalidEventError('not a Pub/Sub push: message.messageId is missing');
  const decoded = decodeData(push.message.data);
  const parsed = developerNotificationSchema.safeParse(decoded);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(
      `not a Google Play notification: ${issue ? `${issue.path.join('.') || 'data'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return { messageId, type: googlePlayTypeOf(parsed.data), notification: parsed.data };
}

/**
 * The inbox draft of an authenticated push, for ingest. Refuses (InvalidEventError: 400, nothing
 * stored) a body the inbox cannot key or that is not for this app: no message id, `data` that is
 * not base64 JSON, or a `packageName` other than `packageName` (GOOGLE_PLAY_PACKAGE_NAME). The
 * raw body is kept as received. Google's notifications name no environment (a licence tester's
 * purchase says so only in the Play Developer API's read) and no Tally user.
 */
export function toGooglePlayInboxDraftFromBody(rawBody: string, packageName: string): InboxEventDraft {
  const message = objectAt(parseJsonObject(rawBody).message);
  const providerEventId = toProviderEventKey(message.messageId ?? message.message_id, 'message.messageId');
  const notification = decodeData(message.data);
  // guard: google-play-package-name
  if (notification.packageName !== packageName) {
    throw new InvalidEventError(`the notification is for package ${String(notification.packageName)}, not this app's`);
  }
  const subscription = objectAt(notification.subscriptionNotification);
  return {
    provider: 'google_play',
    providerEventId,
    type: googlePlayTypeOf(notification),
    livemode: null,
    environment: null,
    userId: null,
    providerCustomerId: null,
    providerSubscriptionId: toIndexValue(subscription.purchaseToken),
    providerPaymentIntentId: toIndexValue(objectAt(notification.voidedPurchaseNotification).orderId),
    providerInvoiceId: null,
    rawBody,
  };
}
