import { z } from 'zod';
import type { PaymentEnvironment } from '../db/schema';
import { InvalidEventError } from '../errors';
import {
  type InboxEventDraft,
  parseEventBody,
  toEventTypeValue,
  toProviderEventKey,
  workerEventIdSchema,
} from '../inbox/inbox-event-draft';

/**
 * The payload of a JWS (`header.payload.signature`), decoded WITHOUT checking its signature. Only
 * for data whose signature was already checked (ingest verified the stored notification and its
 * nested infos with Apple's library before storing it) or that came over TLS from Apple's own API
 * with Tally's JWT. Throws InvalidEventError when it is not a JWS of a JSON object.
 */
export function decodeJwsPayload(jws: string, what: string): Record<string, unknown> {
  const parts = jws.split('.');
  if (parts.length !== 3 || !parts[1]) throw new InvalidEventError(`${what} is not a JWS`);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw new InvalidEventError(`${what}: the JWS payload is not JSON`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new InvalidEventError(`${what}: the JWS payload is not a JSON object`);
  }
  return json as Record<string, unknown>;
}

/** Apple's environment names (`Production`, `Sandbox`) as Tally's; null for any other (Xcode, LocalTesting). */
export function toAppleEnvironment(value: unknown): PaymentEnvironment | null {
  if (value === 'Production') return 'production';
  if (value === 'Sandbox') return 'sandbox';
  return null;
}

/** Apple's name of a Tally environment (the API host and what ingest accepts). */
export const appleEnvironmentNames: Record<PaymentEnvironment, 'Production' | 'Sandbox'> = {
  production: 'Production',
  sandbox: 'Sandbox',
};

const millis = z.number().int().nonnegative();

/** A transaction (JWSTransactionDecodedPayload): what Tally reads of it; other fields pass through. */
export const appleTransactionSchema = z.looseObject({
  transactionId: z.string().min(1).max(255),
  originalTransactionId: z.string().min(1).max(255),
  productId: z.string().min(1).max(255),
  type: z.string().optional(),
  bundleId: z.string().optional(),
  // A UUID the app set at purchase; absent when it set none.
  appAccountToken: z.string().nullish(),
  purchaseDate: millis.optional(),
  expiresDate: millis.nullish(),
  revocationDate: millis.nullish(),
  revocationReason: z.number().int().nullish(),
  quantity: z.number().int().positive().optional(),
  // Milliunits of `currency`.
  price: z.number().int().nonnegative().nullish(),
  currency: z.string().nullish(),
  environment: z.string().optional(),
});
export type AppleTransaction = z.infer<typeof appleTransactionSchema>;

/** A renewal info (JWSRenewalInfoDecodedPayload): what Tally reads of it. */
export const appleRenewalInfoSchema = z.looseObject({
  originalTransactionId: z.string().optional(),
  productId: z.string().optional(),
  autoRenewProductId: z.string().nullish(),
  // 1: on, 0: off.
  autoRenewStatus: z.number().int().nullish(),
  isInBillingRetryPeriod: z.boolean().nullish(),
  gracePeriodExpiresDate: millis.nullish(),
});
export type AppleRenewalInfo = z.infer<typeof appleRenewalInfoSchema>;

const notificationSchema = z.looseObject({
  notificationType: z.string().trim().min(1).max(100),
  subtype: z.string().nullish(),
  notificationUUID: workerEventIdSchema,
  signedDate: millis,
  data: z
    .looseObject({
      environment: z.string().optional(),
      bundleId: z.string().optional(),
      signedTransactionInfo: z.string().nullish(),
      signedRenewalInfo: z.string().nullish(),
      consumptionRequestReason: z.string().nullish(),
    })
    .optional(),
});

/** A stored App Store notification as the worker reads it: the notification and its decoded infos. */
export interface AppleNotification {
  type: string;
  subtype: string | null;
  notificationUUID: string;
  signedDate: number;
  environment: PaymentEnvironment | null;
  transaction: AppleTransaction | null;
  renewalInfo: AppleRenewalInfo | null;
  consumptionRequestReason: string | null;
}

const bodySchema = z.looseObject({ signedPayload: z.string().min(1) });

/** Parses a decoded JWS payload with a schema, naming the first wrong field (never its value). */
export function parseDecoded<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(
      `not ${what}: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * Parses a stored `{"signedPayload"}` body for the worker. It decodes and does not verify again:
 * ingest stored the body only after Apple's library verified the notification and its nested
 * transaction and renewal infos against the pinned roots, bundle id and app Apple id, and nothing
 * but ingest writes webhook rows (docs/stores-apple.md, "Verified once").
 */
export function parseAppleNotification(rawBody: string): AppleNotification {
  const { signedPayload } = parseEventBody(rawBody, bodySchema, 'an App Store notification');
  const notification = parseDecoded(
    notificationSchema,
    decodeJwsPayload(signedPayload, 'signedPayload'),
    'an App Store notification payload',
  );
  const data = notification.data;
  const transaction = data?.signedTransactionInfo
    ? parseDecoded(
        appleTransactionSchema,
        decodeJwsPayload(data.signedTransactionInfo, 'signedTransactionInfo'),
        'an App Store transaction',
      )
    : null;
  const renewalInfo = data?.signedRenewalInfo
    ? parseDecoded(
        appleRenewalInfoSchema,
        decodeJwsPayload(data.signedRenewalInfo, 'signedRenewalInfo'),
        'an App Store renewal info',
      )
    : null;
  return {
    type: notification.notificationType,
    subtype: notification.subtype ?? null,
    notificationUUID: notification.notificationUUID,
    signedDate: notification.signedDate,
    environment: toAppleEnvironment(data?.environment),
    transaction,
    renewalInfo,
    consumptionRequestReason: data?.consumptionRequestReason ?? null,
  };
}

/**
 * The inbox draft of a notification ingest has verified: keyed by (apple, notificationUUID), its
 * type the notificationType, its environment Apple's. The raw body is kept exactly as received.
 */
export function toAppleInboxDraft(
  rawBody: string,
  verified: { notificationUUID: unknown; notificationType: unknown; environment: PaymentEnvironment },
): InboxEventDraft {
  return {
    provider: 'apple',
    providerEventId: toProviderEventKey(verified.notificationUUID, 'notificationUUID'),
    type: toEventTypeValue(verified.notificationType, 'notificationType'),
    livemode: verified.environment === 'production',
    environment: verified.environment,
    // The user is known only from the transaction's appAccountToken, which the worker looks up.
    userId: null,
    providerCustomerId: null,
    providerSubscriptionId: null,
    providerPaymentIntentId: null,
    providerInvoiceId: null,
    rawBody,
  };
}
