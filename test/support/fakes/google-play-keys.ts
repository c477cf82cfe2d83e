import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The keys a Google Play test makes for itself: the service account's (its JSON key file, which
 * the worker reads and signs its JWT grant with) and Google's OIDC signing key with its X.509
 * certificate (made by `openssl req -x509`, as Google serves certificates at
 * https://www.googleapis.com/oauth2/v1/certs), and what is signed with them.
 */
export class GooglePlayTestKeys {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'tally-google-'));
  readonly serviceAccountEmail = 'tally-play@tally-test.iam.gserviceaccount.com';
  readonly serviceAccount = generateKeyPairSync('rsa', { modulusLength: 2048 });
  /** The service account's JSON key file, as the Google Cloud console downloads it. */
  readonly keyFilePath = path.join(this.dir, 'service-account.json');
  /** Google's token signing key, its key id and certificate. */
  readonly oidcKeyId = 'test-oidc-key-1';
  readonly oidc = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly oidcCertificate: string;
  /** The Pub/Sub push subscription's service account (the `email` of its tokens). */
  readonly pushServiceAccount = 'pubsub-push@tally-test.iam.gserviceaccount.com';

  constructor() {
    writeFileSync(
      this.keyFilePath,
      JSON.stringify({
        type: 'service_account',
        project_id: 'tally-test',
        private_key_id: 'sa-key-1',
        private_key: this.serviceAccount.privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: this.serviceAccountEmail,
        token_uri: 'https://oauth2.googleapis.com/token',
      }),
    );
    const keyPath = path.join(this.dir, 'oidc-key.pem');
    writeFileSync(keyPath, this.oidc.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    this.oidcCertificate = execFileSync(
      'openssl',
      ['req', '-x509', '-new', '-key', keyPath, '-subj', '/CN=tally-test-oidc', '-days', '2', '-sha256'],
      { encoding: 'utf8' },
    );
  }

  /**
   * A Google-like OIDC token for a push (RS256, `kid`), valid by default: issuer
   * https://accounts.google.com, the given audience, the push service account as a verified
   * `email`, issued now for an hour. `claims` overrides any of them; `signWith` another key
   * (a forgery under Google's key id); `kid` another key id.
   */
  oidcToken(
    audience: string,
    options: { claims?: Record<string, unknown>; signWith?: KeyObject; kid?: string } = {},
  ): string {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: 'https://accounts.google.com',
      aud: audience,
      azp: '1234567890',
      sub: '1234567890',
      email: this.pushServiceAccount,
      email_verified: true,
      iat: now,
      exp: now + 3600,
      ...options.claims,
    };
    return signJwt(
      { alg: 'RS256', kid: options.kid ?? this.oidcKeyId, typ: 'JWT' },
      claims,
      options.signWith ?? this.oidc.privateKey,
    );
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const signed = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signed}.${sign('RSA-SHA256', Buffer.from(signed), key).toString('base64url')}`;
}

/** A Pub/Sub push body carrying a Google Play developer notification. */
export function pubSubPush(messageId: string, notification: Record<string, unknown>): string {
  return JSON.stringify({
    message: {
      data: Buffer.from(
        JSON.stringify({ version: '1.0', eventTimeMillis: String(Date.now()), ...notification }),
      ).toString('base64'),
      messageId,
      message_id: messageId,
      publishTime: new Date().toISOString(),
      attributes: {},
    },
    subscription: 'projects/tally-test/subscriptions/play-rtdn',
  });
}

/** The `oneTimeProductNotification` of a purchase (type 1 PURCHASED by default). */
export function oneTimeProduct(packageName: string, sku: string, purchaseToken: string, notificationType = 1) {
  return { packageName, oneTimeProductNotification: { version: '1.0', notificationType, purchaseToken, sku } };
}

/** The `voidedPurchaseNotification` of a one-time product (productType 2, a full refund). */
export function voidedPurchase(packageName: string, purchaseToken: string, orderId: string) {
  return { packageName, voidedPurchaseNotification: { purchaseToken, orderId, productType: 2, refundType: 1 } };
}

/** A `subscriptionNotification` (4 PURCHASED, 2 RENEWED, 3 CANCELED, 13 EXPIRED, …). */
export function subscriptionNotice(
  packageName: string,
  subscriptionId: string,
  purchaseToken: string,
  notificationType: number,
) {
  return { packageName, subscriptionNotification: { version: '1.0', notificationType, purchaseToken, subscriptionId } };
}
