import {
  claimIdempotencyKey,
  type DB,
  fingerprintRequestBody,
  finishIdempotencyKey,
  type IdempotencyClaim,
  type IdempotencyKeyVerdict,
  IdempotencyLeaseLostError,
  type IdempotentRequestFingerprint,
  type IdempotentRequestKey,
  isFinalAnswer,
  isValidIdempotencyKey,
  keepIdempotentAnswer,
  releaseIdempotencyKey,
} from '@tally/billing-core';
import type { Request, RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import type { ApiMetrics } from '../api-metrics';
import { errorAnswer, type RouteAnswer, sendAnswer } from './answer';
import { userScopeOf } from './user-scope';

export const idempotencyKeyHeader = 'Idempotency-Key';
export const idempotentReplayedHeader = 'Idempotent-Replayed';

/** A one-transaction use case found that the key answers instead of this attempt (createStudioRequest). */
export interface AnsweredByKey {
  kind: 'answered-by-key';
  verdict: IdempotencyKeyVerdict;
}

/**
 * `Idempotency-Key` for a POST of the user routes (docs/idempotency.md), as its definition's
 * `idempotency` says (http/mount-routes.ts applies it): wraps the route's handler, which returns
 * its answer instead of sending it. Without the header the handler runs
 * and its answer is sent, as without the wrapper. With it: 400 unless it is 1 to 255 visible
 * ASCII characters; then the key, under (the path's user id, key) with the method, path and
 * body fingerprint, answers the request (a replay with `Idempotent-Replayed: true`, 422
 * `idempotency_key_reused`, 409 `idempotency_key_in_use`) or lets the handler run. A final
 * answer (isFinalAnswer) is kept under the key before it is sent, unless the use case committed
 * it with its effects (`kept`); a retryable one is never kept.
 */
export interface IdempotentPosts {
  /**
   * A POST claimed before its handler runs (top-up create and confirm, subscription sync: an
   * external call in the middle). The handler gets the claim (undefined without a key) for a use
   * case that records how far it got and finishes the key in its own transaction (createTopup);
   * otherwise the answer it returns is written under the key, then sent. A retryable answer, or
   * a throw, releases the claim with its recovery point, so the retry resumes at once.
   */
  claimed(
    handler: (req: Request, res: Response, claim: IdempotencyClaim | undefined) => Promise<RouteAnswer>,
  ): RequestHandler;
  /**
   * A POST whose use case is one transaction and keeps its key in it (studio request create):
   * nothing is claimed before it. The handler gets the key (undefined without one) for the use
   * case, which takes the key's try-lock first and commits the answer with its effects (`kept`),
   * or returns what the key says instead (AnsweredByKey). A final answer the transaction did not
   * commit (the body's 400, a 402 whose transaction rolled back) is kept before it is sent, or
   * replaced by what a key that stands by then says; a retryable one is sent and nothing kept.
   */
  inTransaction(
    handler: (
      req: Request,
      res: Response,
      key: IdempotentRequestKey | undefined,
    ) => Promise<RouteAnswer | AnsweredByKey>,
  ): RequestHandler;
}

export interface IdempotentPostsDeps {
  db: Kysely<DB>;
  metrics: Pick<ApiMetrics, 'idempotencyRequests'>;
  /** IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: after this long, the lease of an attempt that died is taken over by its retry. */
  lockTimeoutMs: number;
}

export function createIdempotentPosts(deps: IdempotentPostsDeps): IdempotentPosts {
  const { db, metrics } = deps;
  const warn = (error: unknown, req: Request): false => {
    req.log.warn(
      { err: error, path: req.path },
      'idempotency key not updated; a retry runs again once its lease expires',
    );
    return false;
  };
  /** The request as its key is kept: undefined without the header, null when it answered 400. */
  const requestOf = (req: Request, res: Response): IdempotentRequestFingerprint | undefined | null => {
    const key = req.get(idempotencyKeyHeader);
    if (key === undefined) return undefined;
    if (!isValidIdempotencyKey(key)) {
      const message = `${idempotencyKeyHeader} must be 1 to 255 visible ASCII characters`;
      sendAnswer(res, errorAnswer(400, 'invalid_idempotency_key', message));
      return null;
    }
    // Scoped by the id as the path names it: were it the canonical user, a link made between a
    // request and its retry would make the retry a new key and run it twice.
    const { requestedId } = userScopeOf(res);
    return {
      // guard: idempotency-requested-user
      userId: requestedId,
      key,
      method: req.method,
      path: req.originalUrl.split('?')[0] ?? req.originalUrl,
      requestHash: fingerprintRequestBody(req.body),
    };
  };
  const sendVerdict = (res: Response, verdict: IdempotencyKeyVerdict) => {
    metrics.idempotencyRequests.inc({ outcome: verdictOutcomes[verdict.kind] });
    if (verdict.kind === 'replay') {
      res.status(verdict.status).set(idempotentReplayedHeader, 'true').type('application/json').send(verdict.bodyJson);
    } else sendAnswer(res, verdictAnswers[verdict.kind]);
  };

  return {
    claimed: (handler) => async (req, res, next) => {
      const request = requestOf(req, res);
      if (request === null) return;
      let claim: IdempotencyClaim | undefined;
      if (request) {
        const claimed = await claimIdempotencyKey(db, request, { lockTimeoutMs: deps.lockTimeoutMs });
        if (claimed.kind !== 'execute') return sendVerdict(res, claimed);
        metrics.idempotencyRequests.inc({ outcome: 'executed' });
        claim = claimed.claim;
      }
      let answer: RouteAnswer;
      try {
        answer = await handler(req, res, claim);
      } catch (error) {
        if (claim) await releaseIdempotencyKey(db, claim).catch((failure: unknown) => warn(failure, req));
        // Another attempt took the key over mid-request (createTopup's fenced writes): it runs the request now.
        // guard: idempotency-lease-lost-409
        if (error instanceof IdempotencyLeaseLostError && !res.headersSent) return sendAnswer(res, inUseAnswer);
        return next(error);
      }
      // guard: idempotency-claimed-answer-kept
      if (claim && !answer.kept) {
        const final = isFinalAnswer(answer);
        await (final ? finishIdempotencyKey(db, claim, answer) : releaseIdempotencyKey(db, claim)).catch(
          (error: unknown) => warn(error, req),
        );
      }
      sendAnswer(res, answer);
    },

    inTransaction: (handler) => async (req, res) => {
      const request = requestOf(req, res);
      if (request === null) return;
      const key = request && { request, lockTimeoutMs: deps.lockTimeoutMs };
      // A throw goes to the error handlers: nothing was claimed, so nothing is released.
      const answer = await handler(req, res, key);
      if ('verdict' in answer) return sendVerdict(res, answer.verdict);
      // guard: idempotency-one-transaction-answer-kept
      if (key && !answer.kept && isFinalAnswer(answer)) {
        const kept = await keepIdempotentAnswer(db, key, answer).catch((error: unknown) => warn(error, req));
        if (kept !== 'kept' && kept !== false) return sendVerdict(res, kept);
      }
      if (key) metrics.idempotencyRequests.inc({ outcome: 'executed' });
      sendAnswer(res, answer);
    },
  };
}

const inUseAnswer: RouteAnswer = {
  ...errorAnswer(409, 'idempotency_key_in_use', 'a request with this key is still running; retry later'),
  headers: { 'Retry-After': '1' },
};

const verdictAnswers = {
  reused: errorAnswer(
    422,
    'idempotency_key_reused',
    `this ${idempotencyKeyHeader} was used for another request (method, path or body); use a new key for a new action`,
  ),
  'in-use': inUseAnswer,
} as const;

const verdictOutcomes = { replay: 'replayed', reused: 'conflict', 'in-use': 'in_use' } as const;
