import { sendError } from '@tally/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * API_ANSWER_DEADLINE_MS (docs/configuration.md "Timeouts"): a /v1 call not answered within `ms`
 * (the database cut off or stalled) is answered `503 database_unavailable` with `Retry-After`, so
 * an app never waits on a silent path. The call may still apply when the database answers: the
 * app's retry with the same Idempotency-Key or reference finds what it did, never doubles it.
 * What the route sends after the deadline is dropped (sendAnswer, and the api's error handler).
 */
export function answerDeadline(ms: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.locals.answerDeadlinePassed = true;
      req.log.warn({ path: req.path, deadlineMs: ms }, 'no answer within API_ANSWER_DEADLINE_MS: 503');
      res.setHeader('Retry-After', '1');
      sendError(
        res,
        503,
        'database_unavailable',
        `no answer within ${ms} ms; the call may still apply: retry with the same Idempotency-Key or reference`,
      );
    }, ms);
    const stop = () => clearTimeout(timer);
    res.locals.stopAnswerDeadline = stop;
    res.once('finish', stop);
    res.once('close', stop);
    next();
  };
}

/**
 * For a route that waits on a provider (Stripe, RevenueCat) under that call's own timeout, longer
 * than the deadline: the deadline stops here, once the user is resolved.
 */
export const withoutAnswerDeadline: RequestHandler = (_req, res, next) => {
  (res.locals.stopAnswerDeadline as (() => void) | undefined)?.();
  next();
};

/** Whether the deadline answered this request already (what the route sends next is dropped). */
export function answeredAtDeadline(res: Response): boolean {
  return res.locals.answerDeadlinePassed === true;
}
