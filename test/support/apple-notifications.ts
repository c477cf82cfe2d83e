import { randomUUID } from 'node:crypto';
import { createAppleNotificationVerifier } from '../../apps/ingest/src/verify/verify-apple-notification';
import { type AppleNotificationSpec, appleAppAppleId, appleBundleId, appleNotificationBody } from './apple-payloads';
import type { ApplePki } from './apple-signing';
import type { TestStack } from './stack';

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
