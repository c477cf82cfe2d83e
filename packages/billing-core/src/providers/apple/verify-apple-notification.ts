import { type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  Environment,
  SignedDataVerifier,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import type { PaymentEnvironment } from '../../db/schema';
import { decodeJwsPayload, toAppleEnvironment } from '../../provider-data/apple-signed-data';

export interface AppleNotificationSettings {
  /** DER root certificates (Apple Root CA - G3 in production; a test CA's in tests). */
  rootCertificates: readonly Buffer[];
  bundleId: string;
  appAppleId: number;
}

/**
 * The App Store notification settings of a process's configuration, or undefined while any of the
 * three is unset (the store's notifications are off; production refuses half of them at parse, see
 * platform's appleConfigurationProblems). Reads the root certificates: a bad path throws at start.
 */
export function appleNotificationSettingsOf(config: {
  APPLE_ROOT_CERTIFICATES: readonly string[];
  APPLE_BUNDLE_ID?: string | undefined;
  APPLE_APP_APPLE_ID?: number | undefined;
}): AppleNotificationSettings | undefined {
  const { APPLE_ROOT_CERTIFICATES: paths, APPLE_BUNDLE_ID: bundleId, APPLE_APP_APPLE_ID: appAppleId } = config;
  if (paths.length === 0 || bundleId === undefined || appAppleId === undefined) return undefined;
  return { rootCertificates: readAppleRootCertificates(paths), bundleId, appAppleId };
}

/** What verification found: the inbox key, type and environment, or why the notification is refused. */
export type AppleVerification =
  | {
      ok: true;
      notificationUUID: unknown;
      notificationType: unknown;
      environment: PaymentEnvironment;
      /** When Apple signed it (Unix ms), if the payload says. */
      signedDate: number | null;
    }
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

/** The library's MAX_SKEW: a certificate counts as valid this long before its notBefore and after its notAfter. */
const certificateSkewMs = 60_000;
/** Verified chains kept per environment: Apple signs with one chain at a time, a couple around a rotation. */
const verifiedChainsKept = 32;

interface VerifiedChain {
  publicKey: KeyObject;
  /** The latest notBefore and the earliest notAfter of the leaf, the intermediate and the roots that name its issuer (ms). */
  validFrom: number;
  validTo: number;
}

/**
 * Apple's SignedDataVerifier, offline, keeping the result of a chain's validation by the chain's
 * exact bytes (the leaf's and the intermediate's DER; the roots are the verifier's own). Every App
 * Store JWS carries the same chain, and validating it (two certificate signatures, the marker OIDs
 * read by jsrsasign) was a fifth of a notification's CPU at ingest (bench/README.md, "Store
 * notifications at ingest"); the library keeps verified chains only with its online checks on. A
 * kept chain stands only at an effective date (the payload's signedDate) inside every one of its
 * certificates' validity, as the full check requires; at any other date the full check runs again.
 * Only chains the full check accepted are kept. The library still parses each JWS's certificates
 * and verifies its ES256 signature against the leaf's key.
 */
class ChainKeepingVerifier extends SignedDataVerifier {
  private readonly verifiedChains = new Map<string, VerifiedChain>();

  protected override async verifyCertificateChain(
    trustedRoots: X509Certificate[],
    leaf: X509Certificate,
    intermediate: X509Certificate,
    effectiveDate: Date,
  ): Promise<KeyObject> {
    // guard: apple-chain-kept-by-bytes
    const chainKey = Buffer.concat([leaf.raw, intermediate.raw]).toString('base64');
    const at = effectiveDate.getTime();
    const kept = this.verifiedChains.get(chainKey);
    // guard: apple-chain-kept-within-validity
    if (kept && at >= kept.validFrom - certificateSkewMs && at <= kept.validTo + certificateSkewMs) {
      return kept.publicKey;
    }
    const publicKey = await super.verifyCertificateChain(trustedRoots, leaf, intermediate, effectiveDate);
    const certificates = [leaf, intermediate, ...trustedRoots.filter((root) => root.subject === intermediate.issuer)];
    if (!kept && this.verifiedChains.size >= verifiedChainsKept) {
      this.verifiedChains.delete(this.verifiedChains.keys().next().value as string);
    }
    this.verifiedChains.set(chainKey, {
      publicKey,
      validFrom: Math.max(...certificates.map((certificate) => Date.parse(certificate.validFrom))),
      validTo: Math.min(...certificates.map((certificate) => Date.parse(certificate.validTo))),
    });
    return publicKey;
  }
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
 * The one check of an App Store notification, wherever it comes from: `POST /webhooks/apple` and
 * Apple reconciliation's notification history (docs/stores-apple.md). `rawBody` is the body App
 * Store Server Notifications V2 posts, `{"signedPayload": <JWS>}`. Apple's own SignedDataVerifier, online
 * (OCSP) checks off, one per accepted environment (Production, Sandbox), against the pinned roots,
 * the bundle id and the app's Apple id. It checks the x5c chain up to a pinned root, Apple's marker
 * OIDs on the leaf and intermediate, the validity dates at the payload's signedDate and the ES256
 * signature; then the nested signedTransactionInfo and signedRenewalInfo are verified the same way.
 * The environment the payload claims only picks the verifier: the verifier checks it again.
 * A chain once verified is kept by its bytes for the dates its certificates are valid (ChainKeepingVerifier).
 */
export function createAppleNotificationVerifier(settings: AppleNotificationSettings): AppleNotificationVerifier {
  const roots = [...settings.rootCertificates];
  const verifiers: Record<PaymentEnvironment, SignedDataVerifier> = {
    production: new ChainKeepingVerifier(roots, false, Environment.PRODUCTION, settings.bundleId, settings.appAppleId),
    sandbox: new ChainKeepingVerifier(roots, false, Environment.SANDBOX, settings.bundleId, settings.appAppleId),
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
      signedDate: typeof payload.signedDate === 'number' ? payload.signedDate : null,
    };
  };
}
