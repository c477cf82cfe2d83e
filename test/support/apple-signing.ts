import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject, sign, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Apple's marker extensions: the intermediate (WWDR) and the leaf (App Store receipt signing). */
export const appleIntermediateOid = '1.2.840.113635.100.6.2.1';
export const appleLeafOid = '1.2.840.113635.100.6.11.1';

/** What a test chain marks: both of Apple's OIDs (a real-looking chain), or one of them left out. */
export interface ChainOptions {
  /** Subject prefix (distinguishes two CAs in one test). */
  name?: string;
  intermediateMarker?: boolean;
  leafMarker?: boolean;
  /** The leaf key's curve (Apple's is P-256; another one shows what the library allows such a key). */
  leafCurve?: 'prime256v1' | 'secp384r1';
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A test CA in Apple's shape, made by openssl at run time (nothing checked in): an EC P-256 root,
 * an intermediate (CA, with Apple's intermediate marker OID) and a leaf (with the leaf marker
 * OID), valid from now for ten years. `sign` makes an ES256 JWS whose header carries the chain
 * in `x5c` (leaf, intermediate, root), as the App Store signs its notifications and infos.
 */
export class ApplePki {
  readonly rootDer: Buffer;
  /** The root as a PEM file, for APPLE_ROOT_CERTIFICATES. */
  readonly rootPath: string;
  readonly x5c: [string, string, string];
  readonly leafKey: KeyObject;
  private readonly dir: string;

  private constructor(dir: string, options: ChainOptions) {
    this.dir = dir;
    const name = options.name ?? 'Tally Test';
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl(
      dir,
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'root.key',
      '-out',
      'root.pem',
      '-days',
      '3650',
      '-sha256',
      '-subj',
      `/CN=${name} Root CA/O=Tally Tests`,
      '-addext',
      'basicConstraints=critical,CA:true',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    writeFileSync(
      path.join(dir, 'intermediate.ext'),
      [
        'basicConstraints=critical,CA:true,pathlen:0',
        'keyUsage=critical,keyCertSign,cRLSign',
        ...(options.intermediateMarker === false ? [] : [`${appleIntermediateOid}=DER:0500`]),
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, 'leaf.ext'),
      [
        'basicConstraints=critical,CA:false',
        'keyUsage=critical,digitalSignature',
        ...(options.leafMarker === false ? [] : [`${appleLeafOid}=DER:0500`]),
      ].join('\n'),
    );
    openssl(
      dir,
      'req',
      '-new',
      ...ec,
      '-keyout',
      'intermediate.key',
      '-out',
      'intermediate.csr',
      '-subj',
      `/CN=${name} Intermediate CA/O=Tally Tests`,
    );
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      'intermediate.csr',
      '-CA',
      'root.pem',
      '-CAkey',
      'root.key',
      '-CAcreateserial',
      '-out',
      'intermediate.pem',
      '-days',
      '3650',
      '-sha256',
      '-extfile',
      'intermediate.ext',
    );
    openssl(
      dir,
      'req',
      '-new',
      ...ec.map((arg) =>
        arg === 'ec_paramgen_curve:prime256v1' ? `ec_paramgen_curve:${options.leafCurve ?? 'prime256v1'}` : arg,
      ),
      '-keyout',
      'leaf.key',
      '-out',
      'leaf.csr',
      '-subj',
      `/CN=${name} Store Signing/O=Tally Tests`,
    );
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'intermediate.pem',
      '-CAkey',
      'intermediate.key',
      '-CAcreateserial',
      '-out',
      'leaf.pem',
      '-days',
      '3650',
      '-sha256',
      '-extfile',
      'leaf.ext',
    );
    const der = (file: string) => new X509Certificate(readFileSync(path.join(dir, file))).raw;
    this.rootDer = der('root.pem');
    this.rootPath = path.join(dir, 'root.pem');
    this.x5c = [der('leaf.pem'), der('intermediate.pem'), this.rootDer].map((cert) => cert.toString('base64')) as [
      string,
      string,
      string,
    ];
    this.leafKey = createPrivateKey(readFileSync(path.join(dir, 'leaf.key')));
  }

  /** A new chain in a temporary folder (removed by `dispose`). */
  static create(options: ChainOptions = {}): ApplePki {
    return new ApplePki(mkdtempSync(path.join(tmpdir(), 'tally-apple-pki-')), options);
  }

  /** An ES256 JWS of `payload` signed by this chain's leaf, `x5c` in its header (or the one given). */
  sign(payload: object, options: { x5c?: string[]; key?: KeyObject } = {}): string {
    return signJws({ alg: 'ES256', x5c: options.x5c ?? this.x5c }, payload, options.key ?? this.leafKey);
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `header.payload.signature` with an ES256 signature (IEEE P1363, as JWS wants) by `key`. */
export function signJws(header: object, payload: object, key: KeyObject): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode(header)}.${encode(payload)}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** A fresh EC P-256 key: a forger's, or the In-App Purchase API key (`.p8`) a test makes. */
export function newEcKey(): { privateKey: KeyObject; publicKey: KeyObject; pkcs8Pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKey, pkcs8Pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
