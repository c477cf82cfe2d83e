import { createHmac, type KeyObject, randomUUID, sign, X509Certificate } from 'node:crypto';
import {
  type AppleNotificationSettings,
  type AppleVerification,
  appleEnvironmentVerifiers,
  appleNotificationCheck,
  ChainKeepingVerifier,
} from '@tally/billing-core';
import {
  type AppleNotificationSpec,
  appleAppAppleId,
  appleBundleId,
  appleNotificationPayload,
  appleRenewalPayload,
  appleTransactionPayload,
} from '../../support/apple-payloads';
import { ApplePki, newEcKey } from '../../support/apple-signing';

/**
 * The fast path of ingest's App Store check against Apple's library (docs/stores-apple.md, "What a
 * notification costs at ingest"): every JWS of a corpus, built with the tests' own signing, goes
 * through the library's own SignedDataVerifier (every JWS through its whole verifyJWT) and through
 * ChainKeepingVerifier with the chains already kept (the fast path), and the verdicts must be the
 * same: accepted with the same decoded payload, or refused with the same VerificationStatus; and
 * for a whole notification, the same answer (ok, or the same code and reason).
 *
 * `@apple/app-store-server-library` is pinned exactly (3.1.0, in billing-core's and ingest's
 * package.json). A library upgrade must keep this test green: a check the library adds inside its
 * verifyJWT, which the fast path skips, shows here as a JWS the library refuses and the fast path
 * accepts (add such a JWS to the corpus, and the check to the fast path, before upgrading).
 */

type Verifiers = ReturnType<typeof appleEnvironmentVerifiers>;
type Environment = keyof Verifiers;
type Kind = 'notification' | 'transaction' | 'renewal';

interface Item {
  name: string;
  kind: Kind;
  /** The verifier it is checked by (a notification's own check picks it from the payload). */
  environment: Environment;
  jws: string;
  /** Whether the fast path itself accepts this JWS's verifyJWT (else the library's whole path runs). */
  fast: boolean;
  /** The library's verdict on the JWS itself. */
  ok: boolean;
  /** What the whole check answers a notification carrying it (notifications only). */
  answer: 'ok' | 'invalid_signature' | 'wrong_app';
}

const year = 365 * 86_400_000;
const encode = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** `header.payload.signature`, the signature by `key` over the encoded parts (`hash`, P1363 unless `der`). */
function signed(header: object, payload: unknown, key: KeyObject, options: { hash?: string; der?: boolean } = {}) {
  const input = `${encode(header)}.${encode(payload)}`;
  const signature = sign(options.hash ?? 'sha256', Buffer.from(input), {
    key,
    dsaEncoding: options.der ? 'der' : 'ieee-p1363',
  });
  return `${input}.${signature.toString('base64url')}`;
}

/** The same ECDSA signature with s replaced by n − s (P-256): as valid to OpenSSL, another encoding. */
function malleated(jws: string): string {
  const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  const [header, payload, signature] = jws.split('.') as [string, string, string];
  const bytes = Buffer.from(signature, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  const flipped = Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex');
  return `${header}.${payload}.${Buffer.concat([bytes.subarray(0, 32), flipped]).toString('base64url')}`;
}

/** A verifier's verdict on one JWS: the decoded payload, or the VerificationStatus it was refused with. */
async function verdictOf(verifier: Verifiers[Environment], kind: Kind, jws: string) {
  try {
    const decoded =
      kind === 'notification'
        ? await verifier.verifyAndDecodeNotification(jws)
        : kind === 'transaction'
          ? await verifier.verifyAndDecodeTransaction(jws)
          : await verifier.verifyAndDecodeRenewalInfo(jws);
    return { ok: true, decoded };
  } catch (error) {
    return { ok: false, status: (error as { status?: unknown }).status ?? String(error) };
  }
}

const fastPathCount = (verifiers: Verifiers) =>
  Object.values(verifiers).reduce(
    (sum, verifier) => sum + (verifier instanceof ChainKeepingVerifier ? verifier.fastPathAccepted : Number.NaN),
    0,
  );

describe('the App Store fast path gives the library’s verdicts', () => {
  const pki = ApplePki.create();
  /** A second chain of a trusted root, never seen before the item that carries it (a rotation). */
  const rotated = ApplePki.create({ name: 'Rotated' });
  /** A trusted chain whose leaf key is on P-384: jsonwebtoken allows it ES384, and only ES384. */
  const p384 = ApplePki.create({ name: 'P-384 Leaf', leafCurve: 'secp384r1' });
  const otherRoot = ApplePki.create({ name: 'Other Root' });
  const otherIntermediate = ApplePki.create({ name: 'Other Intermediate' });
  afterAll(() => {
    for (const chain of [pki, rotated, p384, otherRoot, otherIntermediate]) chain.dispose();
  });

  const settings: AppleNotificationSettings = {
    rootCertificates: [pki.rootDer, rotated.rootDer, p384.rootDer],
    bundleId: appleBundleId,
    appAppleId: appleAppAppleId,
  };
  const library = appleEnvironmentVerifiers(settings, 'library');
  const libraryCheck = appleNotificationCheck(library);
  const header = { alg: 'ES256', x5c: pki.x5c };

  /** The chain-keeping verifiers with the chains kept: pki's (both environments) and p384's (production). */
  async function primed(): Promise<Verifiers> {
    const verifiers = appleEnvironmentVerifiers(settings, 'chain-keeping');
    const check = appleNotificationCheck(verifiers);
    for (const environment of ['Production', 'Sandbox'] as const) {
      const spec = {
        type: 'DID_RENEW',
        environment,
        transaction: { transactionId: randomUUID() },
        renewalInfo: {},
      } satisfies AppleNotificationSpec;
      const verdict = await check(JSON.stringify({ signedPayload: pki.sign(appleNotificationPayload(pki, spec)) }));
      expect(verdict.ok).toBe(true);
    }
    await verifiers.production.verifyAndDecodeTransaction(
      signed({ alg: 'ES384', x5c: p384.x5c }, appleTransactionPayload({ transactionId: randomUUID() }), p384.leafKey, {
        hash: 'sha384',
      }),
    );
    return verifiers;
  }

  const notification = (spec: Partial<AppleNotificationSpec> = {}, chain = pki) =>
    appleNotificationPayload(chain, { type: 'ONE_TIME_CHARGE', transaction: { transactionId: randomUUID() }, ...spec });
  const transaction = (extra: object = {}, environment: 'Production' | 'Sandbox' = 'Production') => ({
    ...appleTransactionPayload({ transactionId: randomUUID() }, environment),
    ...extra,
  });

  function corpus(): Item[] {
    /** `ok`: the library accepts the JWS itself; `answer`: what the whole check answers its notification. */
    const item = (name: string, jws: string, fast: boolean, ok: boolean, extra: Partial<Item> = {}): Item => ({
      name,
      kind: 'notification',
      environment: 'production',
      jws,
      fast,
      ok,
      answer: ok ? 'ok' : 'invalid_signature',
      ...extra,
    });
    const accepted = (name: string, jws: string, fast: boolean, extra: Partial<Item> = {}) =>
      item(name, jws, fast, true, extra);
    const refused = (name: string, jws: string, extra: Partial<Item> = {}) => item(name, jws, false, false, extra);
    /** Refused by the library's checks after verifyJWT: the fast path accepted the signature. */
    const wrongApp = (name: string, jws: string, extra: Partial<Item> = {}) =>
      item(name, jws, true, false, { answer: 'wrong_app', ...extra });
    /** The outer JWS accepted, the notification refused for its nested info. */
    const badNested = (name: string, data: Record<string, unknown>, answer: Item['answer']) => {
      const payload = notification();
      return item(name, pki.sign({ ...payload, data: { ...payload.data, ...data } }), true, true, { answer });
    };
    const genuine = pki.sign(notification());
    const [genuineHeader, genuinePayload, genuineSignature] = genuine.split('.') as [string, string, string];
    const otherSignature = pki.sign(notification()).split('.')[2];
    const dates = pki.x5c.map((cert) => new X509Certificate(Buffer.from(cert, 'base64')));
    const validFrom = Math.max(...dates.map((cert) => Date.parse(cert.validFrom)));
    const validTo = Math.min(...dates.map((cert) => Date.parse(cert.validTo)));
    const at = (signedDate: number | undefined) => pki.sign({ ...notification(), signedDate });
    const forger = newEcKey();
    const publicPem = dates[0]?.publicKey.export({ format: 'pem', type: 'spki' }) ?? '';
    const hmacInput = `${encode({ alg: 'HS256', x5c: pki.x5c })}.${encode(notification())}`;
    const hmacJws = `${hmacInput}.${createHmac('sha256', publicPem).update(hmacInput).digest('base64url')}`;
    const byLeaf = (jwsHeader: object, payload: unknown = notification()) => signed(jwsHeader, payload, pki.leafKey);
    const asTransaction = { kind: 'transaction' } as const;
    return [
      // Accepted, by the fast path.
      accepted('a valid notification', genuine, true),
      accepted('a valid Sandbox notification', pki.sign(notification({ environment: 'Sandbox' })), true, {
        environment: 'sandbox',
      }),
      accepted('a valid transaction info', pki.sign(transaction()), true, asTransaction),
      accepted('a valid renewal info', pki.sign(appleRenewalPayload({})), true, { kind: 'renewal' }),
      accepted('the same signature, s replaced by n − s', malleated(genuine), true),
      accepted('a header with typ JWT', byLeaf({ ...header, typ: 'JWT' }), true),
      accepted('no signedDate (the library takes now)', at(undefined), true),
      accepted('signed one skew before the chain is valid', at(validFrom - 60_000), true),
      accepted('signed one skew after the chain expires', at(validTo + 60_000), true),
      accepted(
        'another app Apple id in Sandbox (the library checks it in Production only)',
        pki.sign(notification({ environment: 'Sandbox', appAppleId: 42 })),
        true,
        { environment: 'sandbox' },
      ),
      // Accepted, by the library's whole path: the fast path leaves them to it.
      accepted('a trusted chain not kept yet', rotated.sign(notification({}, rotated)), false),
      accepted(
        'the kept chain in other base64 text',
        pki.sign(notification(), { x5c: [pki.x5c[0].replace(/(.{64})/g, '$1\n'), pki.x5c[1], pki.x5c[2]] }),
        false,
      ),
      accepted(
        'the kept leaf and intermediate with another third certificate',
        pki.sign(notification(), { x5c: [pki.x5c[0], pki.x5c[1], otherRoot.x5c[2]] }),
        false,
      ),
      accepted('a header with a non-ASCII field', byLeaf({ ...header, kid: 'clé' }), false),
      accepted(
        'an exp in the future (jsonwebtoken checks it)',
        pki.sign({ ...notification(), exp: Math.floor(Date.now() / 1000) + 3600 }),
        false,
      ),
      accepted(
        'ES384 by a P-384 leaf',
        signed({ alg: 'ES384', x5c: p384.x5c }, transaction(), p384.leafKey, { hash: 'sha384' }),
        false,
        asTransaction,
      ),
      // Refused: the signature.
      refused(
        'a tampered payload',
        `${genuineHeader}.${encode({ ...notification(), notificationType: 'REFUND_REVERSED' })}.${genuineSignature}`,
      ),
      refused('a tampered header', `${encode({ ...header, kid: 'x' })}.${genuinePayload}.${genuineSignature}`),
      refused('a swapped signature', `${genuineHeader}.${genuinePayload}.${otherSignature}`),
      refused('a forged signature', pki.sign(notification(), { key: forger.privateKey })),
      refused('no signature', `${genuineHeader}.${genuinePayload}.`),
      refused('a DER signature', signed(header, notification(), pki.leafKey, { der: true })),
      refused('a trailing newline', `${genuine}\n`),
      refused('a padded signature', `${genuine}=`),
      // Refused: the algorithm, each (but the first) with the leaf's genuine ES256 signature over its own header.
      refused('alg none, no signature', `${encode({ alg: 'none', x5c: pki.x5c })}.${genuinePayload}.`),
      refused('alg none', byLeaf({ alg: 'none', x5c: pki.x5c })),
      refused('alg HS256', byLeaf({ alg: 'HS256', x5c: pki.x5c })),
      refused('alg HS256, an HMAC keyed by the leaf’s public key', hmacJws),
      refused('alg RS256', byLeaf({ alg: 'RS256', x5c: pki.x5c })),
      refused('alg ES384', byLeaf({ alg: 'ES384', x5c: pki.x5c })),
      refused('alg es256', byLeaf({ alg: 'es256', x5c: pki.x5c })),
      refused('no alg', byLeaf({ x5c: pki.x5c })),
      refused(
        'ES256 by a P-384 leaf',
        signed({ alg: 'ES256', x5c: p384.x5c }, transaction(), p384.leafKey),
        asTransaction,
      ),
      // Refused: the chain and its dates.
      refused('signed just before the chain is valid', at(validFrom - 60_001)),
      refused('signed just after the chain expires', at(validTo + 60_001)),
      refused('signed after the certificates expire', at(Date.now() + 11 * year)),
      refused('a chain to another root', otherRoot.sign(notification({}, otherRoot))),
      refused(
        'the kept leaf with another intermediate',
        pki.sign(notification(), { x5c: [pki.x5c[0], otherIntermediate.x5c[1], pki.x5c[2]] }),
      ),
      refused('two certificates', pki.sign(notification(), { x5c: [pki.x5c[0], pki.x5c[1]] })),
      refused('four certificates', pki.sign(notification(), { x5c: [...pki.x5c, pki.x5c[2]] })),
      // Refused: the payload.
      refused('an exp in the past', pki.sign({ ...notification(), exp: 1 })),
      refused('an nbf in the future', pki.sign({ ...notification(), nbf: Math.floor(Date.now() / 1000) + 3600 })),
      refused('a notificationType that is no type', pki.sign({ ...notification(), notificationType: 42 })),
      refused('a signedDate that is text', pki.sign({ ...notification(), signedDate: 'yesterday' })),
      refused('a payload that is a list', byLeaf(header, [notification()])),
      refused('a payload that is no JSON', byLeaf(header, 'not json')),
      // Refused by the library's checks after verifyJWT, which run after the fast path too.
      wrongApp('another bundle id', pki.sign(notification({ bundleId: 'com.someone.else' }))),
      wrongApp('another app Apple id', pki.sign(notification({ appAppleId: 42 }))),
      // (The whole check picks the Sandbox verifier for it, which accepts it.)
      wrongApp(
        'a Sandbox notification to the Production verifier',
        pki.sign(notification({ environment: 'Sandbox' })),
        {
          answer: 'ok',
        },
      ),
      wrongApp(
        'a transaction of another bundle',
        pki.sign(transaction({ bundleId: 'com.someone.else' })),
        asTransaction,
      ),
      wrongApp('a Sandbox transaction to the Production verifier', pki.sign(transaction({}, 'Sandbox')), asTransaction),
      wrongApp('a Sandbox renewal info to the Production verifier', pki.sign(appleRenewalPayload({}, 'Sandbox')), {
        kind: 'renewal',
      }),
      // A notification whose outer JWS is good and whose nested info is not.
      badNested(
        'a nested transaction by a forger',
        { signedTransactionInfo: pki.sign(transaction(), { key: forger.privateKey }) },
        'invalid_signature',
      ),
      badNested(
        'a nested transaction of another bundle',
        { signedTransactionInfo: pki.sign(transaction({ bundleId: 'com.someone.else' })) },
        'wrong_app',
      ),
      badNested(
        'a nested Sandbox transaction in a Production notification',
        { signedTransactionInfo: pki.sign(transaction({}, 'Sandbox')) },
        'wrong_app',
      ),
      badNested(
        'a nested transaction with alg none',
        { signedTransactionInfo: signed({ alg: 'none', x5c: pki.x5c }, transaction(), pki.leafKey) },
        'invalid_signature',
      ),
      badNested(
        'a nested transaction signed after the chain expires',
        { signedTransactionInfo: pki.sign(transaction({ signedDate: validTo + 60_001 })) },
        'invalid_signature',
      ),
      badNested(
        'a nested renewal info by a forger',
        { signedRenewalInfo: pki.sign(appleRenewalPayload({}), { key: forger.privateKey }) },
        'invalid_signature',
      ),
    ];
  }

  it('gives every JWS of the corpus the verdict the library’s whole path gives it, and takes the fast path where it should', async () => {
    const differences: unknown[] = [];
    for (const { name, kind, environment, jws, fast, ok } of corpus()) {
      const verifiers = await primed();
      const before = fastPathCount(verifiers);
      const expected = await verdictOf(library[environment], kind, jws);
      const actual = await verdictOf(verifiers[environment], kind, jws);
      const tookFastPath = fastPathCount(verifiers) - before === 1;
      // The item is what it says (the library's own verdict), and the fast path agrees with it.
      if (expected.ok !== ok || JSON.stringify(actual) !== JSON.stringify(expected) || tookFastPath !== fast) {
        differences.push({ name, ok, expected, actual, fast, tookFastPath });
      }
    }
    expect(differences).toEqual([]);
  });

  it('answers every notification of the corpus as the library’s check answers it', async () => {
    const differences: unknown[] = [];
    for (const { name, kind, jws, answer } of corpus()) {
      if (kind !== 'notification') continue;
      const body = JSON.stringify({ signedPayload: jws });
      const expected: AppleVerification = await libraryCheck(body);
      const actual = await appleNotificationCheck(await primed())(body);
      const expectedAnswer = expected.ok ? 'ok' : expected.code;
      if (expectedAnswer !== answer || JSON.stringify(actual) !== JSON.stringify(expected)) {
        differences.push({ name, answer, expected, actual });
      }
    }
    expect(differences).toEqual([]);
  });

  it('keeps a chain for the fast path only once the library accepted a JWS carrying it', async () => {
    const verifiers = appleEnvironmentVerifiers(settings, 'chain-keeping');
    const check = appleNotificationCheck(verifiers);
    const body = () => JSON.stringify({ signedPayload: pki.sign(notification()) });
    // A refused JWS with the chain (a forger's signature) keeps nothing.
    const forged = pki.sign(notification(), { key: newEcKey().privateKey });
    expect((await check(JSON.stringify({ signedPayload: forged }))).ok).toBe(false);
    expect(fastPathCount(verifiers)).toBe(0);
    // The first accepted notification kept it by its library-accepted outer JWS: its nested
    // transaction, checked after, already takes the fast path, and so do the next notifications.
    expect((await check(body())).ok).toBe(true);
    expect(fastPathCount(verifiers)).toBe(1);
    expect((await check(body())).ok).toBe(true);
    expect((await check(body())).ok).toBe(true);
    expect(fastPathCount(verifiers)).toBe(5);
    // Each environment keeps its own.
    expect(verifiers.sandbox instanceof ChainKeepingVerifier && verifiers.sandbox.fastPathAccepted).toBe(0);
  });
});
