import { matchesAnySecret, type RefuseFailedAuth, sendError } from '@tally/platform';
import type { NextFunction, Request, Response } from 'express';

/** The bearer token of a request, if it sent one. */
export function bearerTokenOf(req: Request): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(req.get('authorization') ?? '');
  return match?.[1]?.trim();
}

/** Refuses at once: no limiter. */
export const refuseAtOnce: RefuseFailedAuth = (_req, _res, reject) => reject();

/**
 * Answers a request that did not pass a key check. Only one that sent credentials (any
 * Authorization header) and had them wrong is a failed attempt and goes through `refuse`, the
 * failure-only limiter; one that sent none is the challenge a client needs before it can send
 * any (a browser's first request for every page, script and stylesheet carries none), answered
 * `challenge()` at once and never counted, even while its address is locked out.
 */
export function refuseFailedCredentials(
  req: Request,
  res: Response,
  refuse: RefuseFailedAuth,
  challenge: () => void,
): void {
  if ((req.get('authorization') ?? '').trim() === '') challenge();
  else refuse(req, res, challenge);
}

/**
 * 401 unless the request carries one of the accepted keys as a bearer token. A request that sent
 * a wrong key goes through `refuse` (the failure-only limiter: 429 once its IP failed too often);
 * a valid one, or one that sent no key, never does (refuseFailedCredentials).
 */
export function requireBearer(keys: readonly string[], realm: string, refuse: RefuseFailedAuth = refuseAtOnce) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (matchesAnySecret(bearerTokenOf(req), keys)) return next();
    refuseFailedCredentials(req, res, refuse, () => {
      res.set('WWW-Authenticate', `Bearer realm="${realm}"`);
      sendError(res, 401, 'unauthorized', `a valid ${realm} key is required as a bearer token`);
    });
  };
}
