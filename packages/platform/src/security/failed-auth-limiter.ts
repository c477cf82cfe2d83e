import type { Request, Response } from 'express';
import { rateLimit } from 'express-rate-limit';

export interface FailedAuthLimitSettings {
  /** Failed attempts per client IP and window before further failures answer 429; 0 turns it off. */
  limit: number;
  windowMs: number;
}

/**
 * Answers a request that failed authentication: `reject()` (the 400/401), or `onLimited` (a 429)
 * once its IP has failed `limit` times in the window.
 */
export type RefuseFailedAuth = (req: Request, res: Response, reject: () => void) => void;

/**
 * A limiter that only ever sees requests that failed authentication (express-rate-limit, called
 * from the refusal path): valid requests never reach it, so they are never counted, limited or
 * slowed, whoever floods the same address with forgeries. Used for webhooks (ingest) and for the
 * API keys of `/v1`, `/admin` and the dashboard (api).
 */
export function createFailedAuthLimiter(
  settings: FailedAuthLimitSettings | undefined,
  onLimited: (req: Request, res: Response) => void,
): RefuseFailedAuth {
  if (!settings || settings.limit <= 0) return (_req, _res, reject) => reject();
  const limiter = rateLimit({
    windowMs: settings.windowMs,
    limit: settings.limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    // Its start-up checks print to the console; the limiter only ever sees failed requests.
    validate: false,
    handler: (req, res) => onLimited(req, res),
  });
  return (req, res, reject) => {
    void limiter(req, res, () => reject());
  };
}
