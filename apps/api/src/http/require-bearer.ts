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
 * 401 unless the request carries one of the accepted keys as a bearer token. A refused request
 * goes through `refuse` (the failure-only limiter: 429 once its IP failed too often); a valid
 * one never does.
 */
export function requireBearer(keys: readonly string[], realm: string, refuse: RefuseFailedAuth = refuseAtOnce) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (matchesAnySecret(bearerTokenOf(req), keys)) return next();
    refuse(req, res, () => {
      res.set('WWW-Authenticate', `Bearer realm="${realm}"`);
      sendError(res, 401, 'unauthorized', `a valid ${realm} key is required as a bearer token`);
    });
  };
}
