import { OAuth2Client } from 'google-auth-library';

export interface GooglePubSubTokenSettings {
  /** GOOGLE_PUBSUB_AUDIENCE: the push subscription's audience. */
  audience: string;
  /** GOOGLE_PUBSUB_SERVICE_ACCOUNT: the service account the subscription's tokens name as `email`. */
  serviceAccountEmail: string;
  /** GOOGLE_OIDC_CERTS_URL: Google's certificates, a PEM map by key id. */
  certsUrl: string;
}

export type GooglePubSubTokenCheck =
  | { ok: true }
  /** `unavailable`: the certificates could not be fetched (answer 503: Pub/Sub retries). */
  | { ok: false; reason: string; unavailable?: boolean };

/** How long one fetch of Google's certificates may take. */
const CERTS_TIMEOUT_MS = 2_000;

/** The issuers Google's OIDC tokens carry. */
export const googleIssuers = ['accounts.google.com', 'https://accounts.google.com'];

/**
 * The check of a Pub/Sub push's `Authorization: Bearer <OIDC JWT>`, with google-auth-library's
 * OAuth2Client.verifyIdToken: the RS256 signature against Google's certificates (fetched from
 * GOOGLE_OIDC_CERTS_URL, a PEM map by `kid` in Node, and kept for the max-age Google's answer
 * gives, so a push costs no fetch), `iat`/`exp` (with the library's five minutes of skew), the
 * issuer and the audience; then `email` must be the subscription's service account with
 * `email_verified`. One client per process: its certificate cache is what keeps ingest fast.
 * Reasons are short and never quote the token (the library's messages do).
 */
export function createGooglePubSubTokenVerifier(settings: GooglePubSubTokenSettings) {
  const client = new OAuth2Client({
    endpoints: { oauth2FederatedSignonPemCertsUrl: settings.certsUrl },
    issuers: googleIssuers,
    // Node's own fetch: gaxios would otherwise import node-fetch on first use. Each certificate
    // fetch gives up after 2 s (the library retries it), well within Pub/Sub's 10 s deadline.
    transporterOptions: { fetchImplementation: fetch, timeout: CERTS_TIMEOUT_MS },
  });
  return async (authorization: string | undefined): Promise<GooglePubSubTokenCheck> => {
    const match = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/.exec(authorization ?? '');
    if (!match) return { ok: false, reason: 'no Bearer token' };
    let payload: Record<string, unknown> | undefined;
    try {
      const ticket = await client.verifyIdToken({ idToken: match[1] as string, audience: settings.audience });
      payload = ticket.getPayload() as Record<string, unknown> | undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message.startsWith('Failed to retrieve verification certificates')) {
        return { ok: false, reason: message.slice(0, 300), unavailable: true };
      }
      return { ok: false, reason: reasonOf(message) };
    }
    // guard: google-pubsub-email
    if (payload?.email !== settings.serviceAccountEmail || payload.email_verified !== true) {
      return { ok: false, reason: 'the token is not the push subscription service account' };
    }
    return { ok: true };
  };
}

/** A short reason from google-auth-library's message (which may quote the whole token). */
function reasonOf(message: string): string {
  if (message.startsWith('No pem found')) return 'unknown signing key';
  if (message.startsWith('Invalid token signature')) return 'bad signature';
  if (message.startsWith('Token used too late')) return 'expired token';
  if (message.startsWith('Token used too early')) return 'token not yet valid';
  if (message.startsWith('Invalid issuer')) return 'wrong issuer';
  if (message.startsWith('Wrong recipient')) return 'wrong audience';
  if (message.startsWith('Expiration time too far')) return 'token lifetime too long';
  return 'malformed token';
}
