import { matchesAnySecret, type RefuseFailedAuth, sendError } from '@tally/platform';
import type { NextFunction, Request, Response } from 'express';
import { bearerTokenOf, refuseAtOnce } from './require-bearer';

export const adminBasicRealm = 'tally-admin';

function basicCredentialsOf(req: Request): { user: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.get('authorization') ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The password of an HTTP Basic Authorization header (any username), if the request sent one. */
export function basicPasswordOf(req: Request): string | undefined {
  return basicCredentialsOf(req)?.password;
}

/** The user name of an HTTP Basic Authorization header, if any (not checked: any name is accepted). */
export function basicUserOf(req: Request): string | undefined {
  const user = basicCredentialsOf(req)?.user;
  return user === undefined || user === '' ? undefined : user;
}

/**
 * Whether this state-changing request with Basic credentials may have come from another site. A
 * browser attaches Basic credentials to every request to the origin, whoever made the page, so a
 * page elsewhere could otherwise post to the dashboard's API (retry, clean, obliterate) with the
 * operator's key. Only a request that proves its origin passes: the browsers the console supports
 * send `Origin` on every POST/PUT/DELETE and `Sec-Fetch-Site` on every request, so one with
 * neither is not from the console's own pages (an old browser, a plugin, a proxy stripping them)
 * and is refused; scripts use the key as a bearer token, which this rule does not concern.
 */
function isCrossSite(req: Request): boolean {
  const fetchSite = req.get('sec-fetch-site');
  const origin = req.get('origin');
  // guard: console-same-origin-no-headers
  if (fetchSite === undefined && origin === undefined) return true;
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') return true;
  if (origin === undefined || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== req.get('host');
  } catch {
    return true;
  }
}

/**
 * 401 unless the request carries an admin key, either as a bearer token (scripts) or as the
 * password of HTTP Basic auth with any username (a browser opening the dashboard). The 401 asks
 * for Basic credentials so a browser shows its login prompt. State-changing requests made with
 * Basic credentials must come from the same origin (403 otherwise). A refused request goes
 * through `refuse` (the failure-only limiter).
 */
export function requireAdminKeyOrBasic(keys: readonly string[], refuse: RefuseFailedAuth = refuseAtOnce) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (matchesAnySecret(bearerTokenOf(req), keys)) return next();
    if (matchesAnySecret(basicPasswordOf(req), keys)) {
      const safe = req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS';
      // guard: console-same-origin
      if (!safe && isCrossSite(req)) {
        return sendError(
          res,
          403,
          'cross_site_request',
          'dashboard and console actions must come from their own pages',
        );
      }
      return next();
    }
    refuse(req, res, () => {
      res.set('WWW-Authenticate', `Basic realm="${adminBasicRealm}"`);
      sendError(res, 401, 'unauthorized', 'an admin key is required, as a bearer token or as the Basic auth password');
    });
  };
}
