import { randomUUID } from 'node:crypto';
import { createAppleNotificationVerifier } from '@tally/billing-core';
import { type AppleNotificationSpec, appleAppAppleId, appleBundleId, appleNotificationBody } from './apple-payloads';
import type { ApplePki } from './apple-signing';
import { readJson, type TestStack } from './stack';

export {
  type AppleEnvironmentName,
  type AppleNotificationSpec,
  type AppleRenewalSpec,
  type AppleTransactionSpec,
  appleAppAppleId,
  appleBundleId,
  appleNotificationBody,
  appleNotificationPayload,
  applePackProduct,
  applePlanProduct,
  appleRenewalPayload,
  appleSignedPayload,
  appleTransactionPayload,
} from './apple-payloads';

/** Ingest's check for the tests' app, trusting `pki`'s root. */
export function appleVerifierFor(pki: ApplePki) {
  return createAppleNotificationVerifier({
    rootCertificates: [pki.rootDer],
    bundleId: appleBundleId,
    appAppleId: appleAppAppleId,
  });
}

/** Posts a body to `POST /webhooks/apple` as the App Store does (JSON, one connection per request). */
export function postApple(stack: TestStack, body: string, contentType = 'application/json') {
  return fetch(`http://127.0.0.1:${stack.ingest.port}/webhooks/apple`, {
    method: 'POST',
    headers: { 'content-type': contentType, connection: 'close' },
    body,
  });
}

/** Posts a notification and expects it stored (200); returns its notificationUUID. */
export async function deliverApple(stack: TestStack, pki: ApplePki, spec: AppleNotificationSpec): Promise<string> {
  const uuid = spec.uuid ?? randomUUID();
  const response = await postApple(stack, appleNotificationBody(pki, { ...spec, uuid }));
  if (response.status !== 200) throw new Error(`Apple delivery answered ${response.status}: ${await response.text()}`);
  return uuid;
}

/** A new user and the `appleAppAccountToken` its app passes to StoreKit (`GET …/store-accounts`). */
export async function appleUser(stack: TestStack, prefix = 'apple'): Promise<{ userId: string; token: string }> {
  const userId = `${prefix}-${randomUUID().slice(0, 8)}`;
  const answer = await stack.apiRequest(`/v1/users/${userId}/store-accounts`);
  const { appleAppAccountToken } = await readJson(answer);
  return { userId, token: appleAppAccountToken as string };
}

/** A ONE_TIME_CHARGE of the example catalog's pack for `token` (null: none), and `extra`. */
export const appleCharge = (
  transactionId: string,
  token: string | null,
  extra: Partial<AppleNotificationSpec> = {},
): AppleNotificationSpec => ({
  type: 'ONE_TIME_CHARGE',
  transaction: { transactionId, appAccountToken: token },
  ...extra,
});
