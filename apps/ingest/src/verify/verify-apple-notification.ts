import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  Environment,
  SignedDataVerifier,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import { decodeJwsPayload, type PaymentEnvironment, toAppleEnvironment } from '@tally/billing-core';

export interface AppleNotificationSettings {
  /** DER root certificates (Apple Root CA - G3 in production; a test CA's in tests). */
  rootCertificates: readonly Buffer[];
  bundleId: string;
  appAppleId: number;
}

/** What verification found: the inbox key, type and environment, or why the notification is refused. */
export type AppleVerification =
  | { ok: true; notificationUUID: unknown; notificationType: unknown; environment: PaymentEnvironment }
  | { ok: false; code: 'invalid_event' | 'invalid_signature' | 'wrong_app'; reason: string };

export type AppleNotificationVerifier = (rawBody: string) => Promise<AppleVerification>;

/**
 * Reads the root certificates of `APPLE_ROOT_CERTIFICATES` (paths, DER or PEM) at start: a path
 * that cannot be read or is no certificate stops the process, never a webhook.
 */
export function readAppleRootCertificates(paths: readonly string[]): Buffer[] {
  return paths.map((path) => {
    const bytes = readFileSync(path);
    // X509Certificate reads both encodings; `raw` is the DER the library wants.
    return new X509Certificate(bytes).raw;
  });
}

/** A failed check as an answer: another app or environment (`wrong_app`), or a bad signature or chain. */
function refusal(what: string, error: unknown): AppleVerification {
  const status = error instanceof VerificationException ? error.status : undefined;
  const wrongApp =
    status === VerificationStatus.INVALID_APP_IDENTIFIER || status === VerificationStatus.INVALID_ENVIRONMENT;
  const name = status === undefined ? undefined : VerificationStatus[status];
  return {
    ok: false,
    code: wrongApp ? 'wrong_app' : 'invalid_signature',
    reason: `${what}: ${name ?? (error instanceof Error ? error.message : 'not verified')}`,
  };
}

/**
 * The check of `POST /webhooks/apple` (docs/stores-apple.md): Apple's own SignedDataVerifier, online
 * (OCSP) checks off, one per accepted environment (Production, Sandbox), against the pinned roots,
 * the bundle id and the app's Apple id. It checks the x5c chain up to a pinned root, Apple's marker
 * OIDs on the leaf and intermediate, the validity dates at the payload's signedDate and the ES256
 * signature; then the nested signedTransactionInfo and signedRenewalInfo are verified the same way.
 * The environment the payload claims only picks the verifier: the verifier checks it again.
 */
export function createAppleNotificationVerifier(settings: AppleNotificationSettings): AppleNotificationVerifier {
  const roots = [...settings.rootCertificates];
  const verifiers: Record<PaymentEnvironment, SignedDataVerifier> = {
    production: new SignedDataVerifier(roots, false, Environment.PRODUCTION, settings.bundleId, settings.appAppleId),
    sandbox: new SignedDataVerifier(roots, false, Environment.SANDBOX, settings.bundleId, settings.appAppleId),
  };
  return async (rawBody) => {
    let signedPayload: unknown;
    try {
      signedPayload = (JSON.parse(rawBody) as { signedPayload?: unknown } | null)?.signedPayload;
    } catch {
      return { ok: false, code: 'invalid_event', reason: 'body is not valid JSON' };
    }
    if (typeof signedPayload !== 'string' || signedPayload.length === 0) {
      return { ok: false, code: 'invalid_event', reason: 'body has no signedPayload' };
    }
    let claimed: Record<string, unknown>;
    try {
      claimed = decodeJwsPayload(signedPayload, 'signedPayload');
    } catch (error) {
      return { ok: false, code: 'invalid_signature', reason: (error as Error).message };
    }
    const data = (claimed.data ?? claimed.summary ?? {}) as Record<string, unknown>;
    const environment = toAppleEnvironment(data.environment);
    if (environment === null) {
      return { ok: false, code: 'wrong_app', reason: 'the notification names no Production or Sandbox environment' };
    }
    const verifier = verifiers[environment];
    let payload: Awaited<ReturnType<SignedDataVerifier['verifyAndDecodeNotification']>>;
    // guard: apple-webhook-verified
    try {
      payload = await verifier.verifyAndDecodeNotification(signedPayload);
    } catch (error) {
      return refusal('signedPayload', error);
    }
    const nested = payload.data;
    // guard: apple-webhook-nested-verified
    if (nested?.signedTransactionInfo) {
      try {
        await verifier.verifyAndDecodeTransaction(nested.signedTransactionInfo);
      } catch (error) {
        return refusal('signedTransactionInfo', error);
      }
    }
    if (nested?.signedRenewalInfo) {
      try {
        await verifier.verifyAndDecodeRenewalInfo(nested.signedRenewalInfo);
      } catch (error) {
        return refusal('signedRenewalInfo', error);
      }
    }
    return {
      ok: true,
      notificationUUID: payload.notificationUUID,
      notificationType: payload.notificationType,
      environment,
    };
  };
}
