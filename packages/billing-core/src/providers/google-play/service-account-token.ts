import { createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { BillingError } from '../../errors';

/** The OAuth scope of the Play Developer API. */
export const androidPublisherScope = 'https://www.googleapis.com/auth/androidpublisher';

/** Google's token endpoint (GOOGLE_OAUTH_TOKEN_URL's default). */
export const googleOAuthTokenUrl = 'https://oauth2.googleapis.com/token';

/** The fields of a service account's JSON key file Tally reads (Google Cloud console, Keys, JSON). */
const keyFileSchema = z.looseObject({
  type: z.literal('service_account').optional(),
  client_email: z.string().min(3),
  private_key: z.string().min(1),
  private_key_id: z.string().min(1).optional(),
});

export interface ServiceAccountKey {
  clientEmail: string;
  privateKey: KeyObject;
  keyId: string | undefined;
}

/** Reads and checks a service account key file; throws a readable Error (the process stops at start). */
export function readServiceAccountKey(path: string): ServiceAccountKey {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`GOOGLE_SERVICE_ACCOUNT_KEY_PATH: cannot read ${path} as JSON (${(error as Error).message})`);
  }
  const parsed = keyFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(
      `GOOGLE_SERVICE_ACCOUNT_KEY_PATH: ${path} is not a service account key (client_email, private_key)`,
    );
  }
  return {
    clientEmail: parsed.data.client_email,
    privateKey: createPrivateKey(parsed.data.private_key),
    keyId: parsed.data.private_key_id,
  };
}

/** Google could not give an access token now (its endpoint failed or did not answer): retried. */
export class GooglePlayUnavailableError extends BillingError {
  constructor(message: string, cause?: unknown) {
    super('google_play_unavailable', message, { retryable: true, cause });
  }
}

/** Google refused the request (a key, permission or package problem): parks until an operator fixes it. */
export class GooglePlayRequestRejectedError extends BillingError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super('google_play_rejected', message, { retryable: false });
  }
}

const base64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/**
 * A service account's access tokens by the OAuth 2.0 JWT bearer grant (RFC 7523), signed here
 * with node:crypto (RS256) rather than google-auth-library's JWT client, whose token endpoint is
 * fixed to Google's: GOOGLE_OAUTH_TOKEN_URL must be able to point elsewhere (the tests' fake).
 * The assertion's `aud` is the token URL, as Google requires. A token is kept until a minute
 * before it expires; concurrent callers share one grant in flight.
 */
export function createServiceAccountTokens(options: {
  key: ServiceAccountKey;
  tokenUrl: string;
  timeoutMs: number;
  now?: () => number;
}): { accessToken(): Promise<string>; forget(): void } {
  const now = options.now ?? Date.now;
  let cached: { token: string; expiresAtMs: number } | undefined;
  let inFlight: Promise<string> | undefined;

  async function grant(): Promise<string> {
    const issuedAt = Math.floor(now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', ...(options.key.keyId ? { kid: options.key.keyId } : {}) };
    const claims = {
      iss: options.key.clientEmail,
      scope: androidPublisherScope,
      aud: options.tokenUrl,
      iat: issuedAt,
      exp: issuedAt + 3600,
    };
    const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    const assertion = `${signed}.${base64url(sign('RSA-SHA256', Buffer.from(signed), options.key.privateKey))}`;
    let response: Response;
    try {
      response = await fetch(options.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      throw new GooglePlayUnavailableError(
        `Google token endpoint: ${(error as Error).message ?? String(error)}`,
        error,
      );
    }
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (response.status >= 500 || response.status === 429) {
      throw new GooglePlayUnavailableError(`Google token endpoint answered ${response.status}`);
    }
    if (response.status !== 200 || typeof body?.access_token !== 'string') {
      // invalid_grant: the key was deleted or the clock is off; the operator must fix it.
      throw new GooglePlayRequestRejectedError(
        response.status,
        `Google token endpoint refused the service account's grant (${response.status} ${String(body?.error ?? '')})`,
      );
    }
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    cached = { token: body.access_token, expiresAtMs: now() + (expiresIn - 60) * 1000 };
    return body.access_token;
  }

  return {
    async accessToken() {
      if (cached && now() < cached.expiresAtMs) return cached.token;
      inFlight ??= grant().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    /** Drops the cached token (Google answered 401: it was revoked or expired early). */
    forget() {
      cached = undefined;
    },
  };
}
