import {
  claimIdempotencyKey,
  type DB,
  fingerprintRequestBody,
  finishIdempotencyKey,
  type IdempotencyBinding,
  type IdempotencyClaim,
  IdempotencyLeaseLostError,
  type IdempotentAnswer,
  isValidIdempotencyKey,
  releaseIdempotencyKey,
} from '@tally/billing-core';
import { type Logger, sendError } from '@tally/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import type { ApiMetrics } from '../api-metrics';
import { userScopeOf } from './user-scope';

export const idempotencyKeyHeader = 'Idempotency-Key';
export const idempotentReplayedHeader = 'Idempotent-Replayed';

/** The key of the POST being run, for routes whose use case stores its answer in its own transaction. */
export interface IdempotentPost {
  readonly claim: IdempotencyClaim;
  /**
   * Hands the claim to a use case with how this route renders its answer from the result: the
   * use case stores that answer in the transaction that commits its effects (studio request
   * create, top-up create), so the route must send exactly `answer(result)` once it returns, and
   * the middleware then does not write it a second time.
   */
  bind<Result>(answer: (result: Result) => IdempotentAnswer): IdempotencyBinding<Result>;
}

/** The running POST's key, when it came with one (createIdempotentPosts left it for the route). */
export function idempotentPostOf(res: Response): IdempotentPost | undefined {
  return res.locals.idempotentPost as IdempotentPost | undefined;
}

export interface IdempotentPostsDeps {
  db: Kysely<DB>;
  logger: Logger;
  metrics: Pick<ApiMetrics, 'idempotencyRequests'>;
  /** IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: after this long, the lease of an attempt that died is taken over by its retry. */
  lockTimeoutMs: number;
}

/**
 * `Idempotency-Key` for every POST of the user routes, once (docs/idempotency.md); mounted by
 * createUserRoutes' caller after the id is resolved, before the routes. Without the header the
 * request runs exactly as it would without this middleware. With it: 400 unless it is 1 to 255
 * visible ASCII characters; then the key is claimed under (canonical user, key) with the method,
 * path and body fingerprint, and the request is answered from the key (replay, with
 * `Idempotent-Replayed: true`), refused (422 `idempotency_key_reused`, 409
 * `idempotency_key_in_use`), or run. A run's answer below 500 is kept under the key before it is
 * sent (or, for a route that binds the key, committed with its effects); a 5xx releases the key
 * with its recovery point so the retry resumes at once.
 */
export function createIdempotentPosts(deps: IdempotentPostsDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST') return next();
    const key = req.get(idempotencyKeyHeader);
    if (key === undefined) return next();
    if (!isValidIdempotencyKey(key)) {
      return sendError(
        res,
        400,
        'invalid_idempotency_key',
        `${idempotencyKeyHeader} must be 1 to 255 visible ASCII characters`,
      );
    }
    const { userId } = userScopeOf(res);
    const claimed = await claimIdempotencyKey(
      deps.db,
      {
        userId,
        key,
        method: req.method,
        path: req.originalUrl.split('?')[0] ?? req.originalUrl,
        requestHash: fingerprintRequestBody(req.body),
      },
      { lockTimeoutMs: deps.lockTimeoutMs },
    );
    switch (claimed.kind) {
      case 'replay':
        deps.metrics.idempotencyRequests.inc({ outcome: 'replayed' });
        res
          .status(claimed.status)
          .set(idempotentReplayedHeader, 'true')
          .type('application/json')
          .send(claimed.bodyJson);
        return;
      case 'reused':
        deps.metrics.idempotencyRequests.inc({ outcome: 'conflict' });
        return sendError(
          res,
          422,
          'idempotency_key_reused',
          `this ${idempotencyKeyHeader} was used for another request (method, path or body); use a new key for a new action`,
        );
      case 'in-use':
        deps.metrics.idempotencyRequests.inc({ outcome: 'in_use' });
        return sendInUse(res);
      case 'execute':
        deps.metrics.idempotencyRequests.inc({ outcome: 'executed' });
        keepAnswer(deps, res, claimed.claim);
        return next();
      default: {
        const unreachable: never = claimed;
        throw new Error(`unknown claim ${JSON.stringify(unreachable)}`);
      }
    }
  };
}

function sendInUse(res: Response): void {
  res.set('Retry-After', '1');
  sendError(res, 409, 'idempotency_key_in_use', 'a request with this key is still running; retry later');
}

/**
 * Makes the route's answer the key's: below 500 it is written under the key (unless the route's
 * transaction committed it) and then sent; a 5xx releases the key and is sent. An answer that
 * did not go through res.json (none today) releases the key once it is sent.
 */
function keepAnswer(deps: IdempotentPostsDeps, res: Response, claim: IdempotencyClaim): void {
  let committedStatus: number | undefined;
  let settled = false;
  const post: IdempotentPost = {
    claim,
    bind: (answer) => ({
      claim,
      answer: (result) => {
        const rendered = answer(result);
        committedStatus = rendered.status;
        return rendered;
      },
    }),
  };
  res.locals.idempotentPost = post;
  const send = res.json.bind(res);
  const log = (error: unknown) =>
    deps.logger.warn({ err: error, idempotencyKeyId: claim.id }, 'idempotency key not updated; its lease expires');
  res.json = (body: unknown) => {
    if (settled) return send(body);
    settled = true;
    const status = res.statusCode;
    // The route's transaction committed this answer: a route that binds the key reaches res.json
    // with that status only after its use case returned.
    if (committedStatus === status) return send(body);
    const kept =
      status >= 500 ? releaseIdempotencyKey(deps.db, claim) : finishIdempotencyKey(deps.db, claim, { status, body });
    void kept
      .catch(log)
      .then(() => {
        if (!res.headersSent) send(body);
      })
      .catch((error: unknown) => {
        deps.logger.error({ err: error, idempotencyKeyId: claim.id }, 'answer not sent');
        res.destroy();
      });
    return res;
  };
  res.on('finish', () => {
    if (settled) return;
    settled = true;
    releaseIdempotencyKey(deps.db, claim).catch(log);
  });
}

/** Maps IdempotencyLeaseLostError (another attempt took the key over mid-request) to 409 `idempotency_key_in_use`. */
export function idempotencyErrorHandler(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (!(error instanceof IdempotencyLeaseLostError)) {
    next(error);
    return;
  }
  if (!res.headersSent) sendInUse(res);
}
