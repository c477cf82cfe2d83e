import { isAscii } from 'node:buffer';
import { type KeyObject, verify as verifySignature, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  Environment,
  SignedDataVerifier,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import type { Validator } from '@apple/app-store-server-library/dist/models/Validator';
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
/** A compact JWS with a signature, every part in the base64url alphabet (jws's JWS_REGEX, the signature required). */
const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

interface VerifiedChain {
  publicKey: KeyObject;
  /** The latest notBefore and the earliest notAfter of the leaf, the intermediate and the roots that name its issuer (ms). */
  validFrom: number;
  validTo: number;
}

/** A JWS part decoded as a JSON object (not null, not an array), or undefined. `ascii`: any other byte is refused. */
function jsonObjectOf(part: string, ascii: boolean): Record<string, unknown> | undefined {
  const bytes = Buffer.from(part, 'base64url');
  if (ascii && !isAscii(bytes)) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The header's `x5c` when it is three strings (leaf, intermediate, root), as App Store JWS carry it. */
function x5cOf(header: Record<string, unknown> | undefined): [string, string, string] | undefined {
  const x5c = header?.x5c;
  return Array.isArray(x5c) && x5c.length === 3 && x5c.every((entry) => typeof entry === 'string')
    ? (x5c as [string, string, string])
    : undefined;
}

/** The exact `x5c` strings as one key (JSON: no two lists of strings share it). */
function x5cKey(x5c: [string, string, string]): string {
  // guard: apple-fast-path-exact-x5c
  return JSON.stringify(x5c);
}

/**
 * Apple's SignedDataVerifier, offline, with two shortcuts for the chain every App Store JWS carries.
 * Pinned: `@apple/app-store-server-library` 3.1.0 exactly (billing-core's and ingest's package.json);
 * an upgrade must keep test/e2e/stores-apple/apple-fast-path.test.ts green (docs/stores-apple.md,
 * "What a notification costs at ingest").
 *
 * 1. Chain validation kept by the chain's exact bytes (`verifyCertificateChain`): the leaf's and
 *    the intermediate's DER (the roots are the verifier's own). Validating it (two certificate
 *    signatures, the marker OIDs read by jsrsasign) was a fifth of a notification's CPU at ingest.
 *    The library keeps verified chains only with its online checks on. A kept chain stands only at
 *    an effective date (the payload's signedDate) inside every one of its certificates' validity,
 *    as the full check requires; at any other date the full check runs again. Only chains the full
 *    check accepted are kept.
 *
 * 2. The fast path (`verifyJWT`): a JWS whose `x5c`, its exact three strings, was in a JWS the
 *    library's whole `verifyJWT` accepted earlier in this process (and whose chain is still kept,
 *    its leaf key on P-256) skips the library's per-JWS work that does not depend on the JWS
 *    (parsing both certificates again, the leaf's key through PEM and back). It ACCEPTS only, never
 *    refuses: whatever it does not accept goes to the library's whole `verifyJWT` (`super`), which
 *    gives the verdict and its status. It accepts when, in this order:
 *    - the JWS is three non-empty base64url parts; the header decodes (ASCII only: the library reads
 *      it as UTF-8, jws as Latin-1) to a JSON object whose `alg` is `ES256` exactly (the only
 *      algorithm jsonwebtoken allows a P-256 key) and whose `x5c` is a kept list;
 *    - the payload decodes to a JSON object without `nbf` or `exp` (jsonwebtoken's claim checks,
 *      against the clock, stay its own);
 *    - the library's own validator for that kind of JWS (the one the library passes) accepts it;
 *    - the effective date (the library's own extractor: signedDate, or now) is inside the kept
 *      chain's validity, the library's MAX_SKEW included;
 *    - the ES256 signature (IEEE P1363, as JWS encodes it) over `<header>.<payload>` verifies with
 *      the kept key (what jws/jwa check for jsonwebtoken.verify).
 *    It returns the decoded payload, as the library's verifyJWT does, and the library's public
 *    method then runs its own checks on it, unchanged (3.1.0): verifyAndDecodeNotification the
 *    bundle id, the app Apple id (Production only) and the environment of `data`, `summary`,
 *    `externalPurchaseToken` or `appData` (INVALID_APP_IDENTIFIER, INVALID_ENVIRONMENT);
 *    verifyAndDecodeTransaction the bundle id and the environment; verifyAndDecodeRenewalInfo the
 *    environment. Only with online checks off (the library's effective date is then the signedDate).
 */
export class ChainKeepingVerifier extends SignedDataVerifier {
  private readonly verifiedChains = new Map<string, VerifiedChain>();
  /** The chains of JWS the library's whole verifyJWT accepted, by their exact x5c strings. */
  private readonly acceptedX5c = new Map<string, VerifiedChain>();
  /** JWS the fast path accepted (test/e2e/stores-apple/apple-fast-path.test.ts reads it). */
  fastPathAccepted = 0;

  protected override async verifyJWT<T>(
    jwt: string,
    validator: Validator<T>,
    signedDateExtractor: (decodedJWT: T) => Date,
  ): Promise<T> {
    const fast = this.acceptedOnFastPath(jwt, validator, signedDateExtractor);
    if (fast !== undefined) {
      this.fastPathAccepted += 1;
      return fast;
    }
    const decoded = await super.verifyJWT(jwt, validator, signedDateExtractor);
    this.keepAcceptedX5c(jwt);
    return decoded;
  }

  /** The decoded payload when the fast path accepts the JWS (see the class), else undefined. */
  private acceptedOnFastPath<T>(
    jwt: string,
    validator: Validator<T>,
    signedDateExtractor: (decodedJWT: T) => Date,
  ): T | undefined {
    if (this.enableOnlineChecks || this.acceptedX5c.size === 0 || !compactJws.test(jwt)) return undefined;
    const [encodedHeader, encodedPayload, encodedSignature] = jwt.split('.') as [string, string, string];
    const header = jsonObjectOf(encodedHeader, true);
    // guard: apple-fast-path-es256
    if (header?.alg !== 'ES256') return undefined;
    const x5c = x5cOf(header);
    const kept = x5c && this.acceptedX5c.get(x5cKey(x5c));
    if (!kept) return undefined;
    const payload = jsonObjectOf(encodedPayload, false);
    // guard: apple-fast-path-leaves-claims
    if (payload === undefined || payload.nbf !== undefined || payload.exp !== undefined) return undefined;
    try {
      // guard: apple-fast-path-library-validator
      if (!validator.validate(payload)) return undefined;
      const at = signedDateExtractor(payload).getTime();
      // guard: apple-fast-path-within-validity
      if (!(at >= kept.validFrom - certificateSkewMs && at <= kept.validTo + certificateSkewMs)) return undefined;
      const signed = Buffer.from(`${encodedHeader}.${encodedPayload}`);
      const signature = Buffer.from(encodedSignature, 'base64url');
      // guard: apple-fast-path-signature
      if (!verifySignature('sha256', signed, { key: kept.publicKey, dsaEncoding: 'ieee-p1363' }, signature)) {
        return undefined;
      }
      return payload;
    } catch {
      return undefined;
    }
  }

  /**
   * After the library's whole verifyJWT accepted `jwt`: its exact x5c strings name the chain it
   * validated, found as the library found it (the certificates parsed from those strings, by their
   * DER) among the kept chains. A leaf key not on P-256 is not kept (jsonwebtoken would then allow
   * another algorithm than ES256: the library keeps judging those).
   */
  private keepAcceptedX5c(jwt: string): void {
    if (this.enableOnlineChecks) return;
    try {
      const x5c = x5cOf(jsonObjectOf(jwt.split('.')[0] ?? '', true));
      if (!x5c) return;
      const key = x5cKey(x5c);
      if (this.acceptedX5c.has(key)) return;
      const [leaf, intermediate] = [x5c[0], x5c[1]].map((cert) => new X509Certificate(Buffer.from(cert, 'base64')));
      const chain = this.verifiedChains.get(chainKeyOf(leaf as X509Certificate, intermediate as X509Certificate));
      // guard: apple-fast-path-p256-key
      if (chain?.publicKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return;
      if (this.acceptedX5c.size >= verifiedChainsKept) {
        this.acceptedX5c.delete(this.acceptedX5c.keys().next().value as string);
      }
      this.acceptedX5c.set(key, chain);
    } catch {
      // Nothing kept: the next JWS of this chain takes the library's whole path again.
    }
  }

  protected override async verifyCertificateChain(
    trustedRoots: X509Certificate[],
    leaf: X509Certificate,
    intermediate: X509Certificate,
    effectiveDate: Date,
  ): Promise<KeyObject> {
    const chainKey = chainKeyOf(leaf, intermediate);
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

/** A chain's key among the kept ones: the leaf's and the intermediate's DER. */
function chainKeyOf(leaf: X509Certificate, intermediate: X509Certificate): string {
  // guard: apple-chain-kept-by-bytes
  return Buffer.concat([leaf.raw, intermediate.raw]).toString('base64');
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
 * The nested infos are verified although the outer signature covers their bytes: the library
 * does not treat them as verified (verifyAndDecodeNotification leaves them signed), and their own
 * checks (the transaction's bundle id, each one's environment and dates) run only this way.
 * The environment the payload claims only picks the verifier: the verifier checks it again.
 * A chain once verified is kept by its bytes for the dates its certificates are valid, and a JWS
 * whose x5c the library accepted before takes the fast path (ChainKeepingVerifier).
 */
export function createAppleNotificationVerifier(settings: AppleNotificationSettings): AppleNotificationVerifier {
  return appleNotificationCheck(appleEnvironmentVerifiers(settings, 'chain-keeping'));
}

/**
 * One verifier per accepted environment, online checks off: `chain-keeping` (ChainKeepingVerifier,
 * what ingest and reconciliation use) or `library` (Apple's SignedDataVerifier itself, every JWS
 * through its whole verification: the reference the fast path is compared with in
 * test/e2e/stores-apple/apple-fast-path.test.ts).
 */
export function appleEnvironmentVerifiers(
  settings: AppleNotificationSettings,
  kind: 'chain-keeping' | 'library',
): Record<PaymentEnvironment, SignedDataVerifier> {
  const roots = [...settings.rootCertificates];
  const Verifier = kind === 'chain-keeping' ? ChainKeepingVerifier : SignedDataVerifier;
  return {
    production: new Verifier(roots, false, Environment.PRODUCTION, settings.bundleId, settings.appAppleId),
    sandbox: new Verifier(roots, false, Environment.SANDBOX, settings.bundleId, settings.appAppleId),
  };
}

/** The check of createAppleNotificationVerifier over the given verifiers (by the environment the payload names). */
export function appleNotificationCheck(
  verifiers: Record<PaymentEnvironment, SignedDataVerifier>,
): AppleNotificationVerifier {
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
