import {
  AnsweredByIdempotencyKeyError,
  claimIdempotencyKey,
  type DB,
  fingerprintRequestBody,
  finishIdempotencyKey,
  type IdempotencyBinding,
  type IdempotencyClaim,
  type IdempotencyInTransaction,
  type IdempotencyKeyVerdict,
  IdempotencyLeaseLostError,
  type IdempotentAnswer,
  type IdempotentRequestFingerprint,
  isFinalAnswer,
  isValidIdempotencyKey,
  keepIdempotentAnswer,
  releaseIdempotencyKey,
} from '@tally/billing-core';
import { type Logger, sendError } from '@tally/platform';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { Kysely } from 'kysely';
import type { ApiMetrics } from '../api-metrics';
import { userScopeOf } from './user-scope';

export const idempotencyKeyHeader = 'Idempotency-Key';
export const idempotentReplayedHeader = 'Idempotent-Replayed';

/** The key of the POST being run, for routes whose use case keeps its answer in its own transaction. */
export interface IdempotentPost {
  /**
   * A POST claimed before the route ran (every route but the one-transaction ones): hands the
   * claim to a use case with how this route renders its answer from the result. The use case
   * stores that answer in the transaction that commits its effects (top-up create), so the route
   * must send exactly `answer(result)` once it returns, and the middleware then does not write
   * it a second time.
   */
  bind<Result>(answer: (result: Result) => IdempotentAnswer): IdempotencyBinding<Result>;
  /**
   * A one-transaction POST (`oneTransactionPosts`: nothing claimed before the route): hands the
   * key to a use case that takes the key's try-lock in its transaction's first statement and
   * writes the finished key, `answer(result)`, with its effects (studio request create). The route must
   * send exactly `answer(result)` once it returns; when the key answers instead, the use case
   * throws AnsweredByIdempotencyKeyError and idempotencyErrorHandler sends the key's answer.
   */
  inTransaction<Result>(answer: (result: Result) => IdempotentAnswer): IdempotencyInTransaction<Result>;
}

interface RunningPost extends IdempotentPost {
  /** Sends what the key says instead of the route's answer (replay, 422, 409). */
  answerFromKey(verdict: IdempotencyKeyVerdict): void;
}

/** The running POST's key, when it came with one (createIdempotentPosts left it for the route). */
export function idempotentPostOf(res: Response): IdempotentPost | undefined {
  return res.locals.idempotentPost as RunningPost | undefined;
}

export interface IdempotentPostsDeps {
  db: Kysely<DB>;
  logger: Logger;
  metrics: Pick<ApiMetrics, 'idempotencyRequests'>;
  /** IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: after this long, the lease of an attempt that died is taken over by its retry. */
  lockTimeoutMs: number;
  /**
   * The POST routes (paths as their router spells them) whose use case is one transaction that
   * keeps the key itself (IdempotentPost.inTransaction): no claim before them. Matched by
   * Express exactly as the routes are.
   */
  oneTransactionPosts: readonly string[];
}

/**
 * `Idempotency-Key` for every POST of the user routes, once (docs/idempotency.md); mounted by
 * createUserRoutes' caller after the id is resolved, before the routes. Without the header the
 * request runs exactly as it would without this router. With it: 400 unless it is 1 to 255
 * visible ASCII characters; then the key is looked up under (the path's user id, key) with the
 * method, path and body fingerprint, and the request is answered from the key (replay, with
 * `Idempotent-Replayed: true`), refused (422 `idempotency_key_reused`, 409
 * `idempotency_key_in_use`), or run. A POST of `oneTransactionPosts` is not claimed first: its
 * use case takes and writes the key in its own transaction (IdempotentPost.inTransaction). Any
 * other POST is claimed before the route runs. A run's final answer is kept under the key
 * before it is sent (or, when the route's transaction committed it, just sent); a retryable one
 * (isFinalAnswer: a 5xx, or markAnswerRetryable) is never kept, and releases a claim with its
 * recovery point so the retry resumes at once.
 */
export function createIdempotentPosts(deps: IdempotentPostsDeps): Router {
  const router = Router();
  const oneTransaction = 'idempotencyOneTransactionPost';
  for (const path of deps.oneTransactionPosts) {
    router.post(path, (_req, res, next) => {
      res.locals[oneTransaction] = true;
      next();
    });
  }
  router.use(async (req: Request, res: Response, next: NextFunction) => {
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
    // Scoped by the id as the path names it: were it the canonical user, a link made between a
    // request and its retry would make the retry a new key and run it twice.
    const { requestedId } = userScopeOf(res);
    const request: IdempotentRequestFingerprint = {
      userId: requestedId,
      key,
      method: req.method,
      path: req.originalUrl.split('?')[0] ?? req.originalUrl,
      requestHash: fingerprintRequestBody(req.body),
    };
    if (res.locals[oneTransaction] === true) {
      keepAnswerInTransaction(deps, res, request);
      return next();
    }
    const claimed = await claimIdempotencyKey(deps.db, request, { lockTimeoutMs: deps.lockTimeoutMs });
    if (claimed.kind !== 'execute') return sendVerdict(deps, res, claimed);
    deps.metrics.idempotencyRequests.inc({ outcome: 'executed' });
    keepAnswer(deps, res, claimed.claim);
    next();
  });
  return router;
}

const retryableAnswer = 'idempotencyRetryableAnswer';

/**
 * The answer about to be sent is not final (a route answering a BillingError whose `retryable`
 * flag is set): its Idempotency-Key is left resumable instead of keeping it (isFinalAnswer).
 */
export function markAnswerRetryable(res: Response): void {
  res.locals[retryableAnswer] = true;
}

function isFinal(res: Response): boolean {
  return isFinalAnswer({ status: res.statusCode, retryable: res.locals[retryableAnswer] === true });
}

/** Answers a request from its key: the stored answer again, 422, or 409. */
function sendVerdict(deps: IdempotentPostsDeps, res: Response, verdict: IdempotencyKeyVerdict): void {
  switch (verdict.kind) {
    case 'replay':
      deps.metrics.idempotencyRequests.inc({ outcome: 'replayed' });
      res.status(verdict.status).set(idempotentReplayedHeader, 'true').type('application/json').send(verdict.bodyJson);
      return;
    case 'reused':
      deps.metrics.idempotencyRequests.inc({ outcome: 'conflict' });
      sendError(
        res,
        422,
        'idempotency_key_reused',
        `this ${idempotencyKeyHeader} was used for another request (method, path or body); use a new key for a new action`,
      );
      return;
    case 'in-use':
      deps.metrics.idempotencyRequests.inc({ outcome: 'in_use' });
      sendInUse(res);
      return;
    default: {
      const unreachable: never = verdict;
      throw new Error(`unknown idempotency verdict ${JSON.stringify(unreachable)}`);
    }
  }
}

function sendInUse(res: Response): void {
  res.set('Retry-After', '1');
  sendError(res, 409, 'idempotency_key_in_use', 'a request with this key is still running; retry later');
}

/**
 * Makes the route's answer the key's: a final one (isFinalAnswer) is written under the key
 * (unless the route's transaction committed it) and then sent; a retryable one (a 5xx, one
 * marked with markAnswerRetryable) releases the key and is sent. An answer that
 * did not go through res.json (none today) releases the key once it is sent.
 */
function keepAnswer(deps: IdempotentPostsDeps, res: Response, claim: IdempotencyClaim): void {
  let committedStatus: number | undefined;
  let settled = false;
  const post: RunningPost = {
    bind: (answer) => ({
      claim,
      answer: (result) => {
        const rendered = answer(result);
        committedStatus = rendered.status;
        return rendered;
      },
    }),
    inTransaction: () => {
      throw new Error(
        'this POST was claimed before its route: add the route to oneTransactionPosts to use inTransaction',
      );
    },
    answerFromKey: (verdict) => {
      throw new Error(`a claimed POST cannot be answered from its key (${verdict.kind})`);
    },
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
    const kept = isFinal(res)
      ? finishIdempotencyKey(deps.db, claim, { status, body })
      : releaseIdempotencyKey(deps.db, claim);
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

/**
 * The key of a one-transaction POST: the use case checks it and commits the answer with its
 * effects (then it is just sent), or finds the key answers instead (AnsweredByIdempotencyKeyError,
 * answered by idempotencyErrorHandler through answerFromKey). Any other answer below 500 (a
 * refusal the transaction did not commit: the body's 400, a 402 whose transaction rolled back)
 * is kept under the key before it is sent, or replaced by what the key says when another
 * attempt's key stands. A retryable answer (a 5xx, markAnswerRetryable) is sent and nothing is
 * kept: nothing was claimed, nothing to release.
 */
function keepAnswerInTransaction(deps: IdempotentPostsDeps, res: Response, request: IdempotentRequestFingerprint) {
  const key = { request, lockTimeoutMs: deps.lockTimeoutMs };
  let committedStatus: number | undefined;
  let bound = false;
  let settled = false;
  const post: RunningPost = {
    bind: () => {
      throw new Error('this POST keeps its key in its transaction (oneTransactionPosts): use inTransaction');
    },
    inTransaction: (answer) => {
      bound = true;
      return {
        ...key,
        answer: (result) => {
          const rendered = answer(result);
          committedStatus = rendered.status;
          return rendered;
        },
      };
    },
    answerFromKey: (verdict) => {
      settled = true;
      sendVerdict(deps, res, verdict);
    },
  };
  res.locals.idempotentPost = post;
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    if (settled) return send(body);
    settled = true;
    const status = res.statusCode;
    if (!bound && status < 300) {
      deps.logger.error(
        { path: request.path },
        'a one-transaction POST answered without keeping its key in its transaction',
      );
    }
    // The route's transaction committed this answer: the route reaches res.json with that status only after its use case returned.
    if (committedStatus === status || !isFinal(res)) {
      deps.metrics.idempotencyRequests.inc({ outcome: 'executed' });
      return send(body);
    }
    void keepIdempotentAnswer(deps.db, key, { status, body })
      .then(
        (kept) => {
          if (kept !== 'kept') return sendVerdict(deps, res, kept);
          deps.metrics.idempotencyRequests.inc({ outcome: 'executed' });
          send(body);
        },
        (error: unknown) => {
          deps.logger.warn({ err: error, path: request.path }, 'idempotency key not kept; a retry runs again');
          if (!res.headersSent) send(body);
        },
      )
      .catch((error: unknown) => {
        deps.logger.error({ err: error, path: request.path }, 'answer not sent');
        res.destroy();
      });
    return res;
  };
}

/**
 * Answers what the key decided after the route began: AnsweredByIdempotencyKeyError (a
 * one-transaction use case found the key answers: replay, 422, 409) and IdempotencyLeaseLostError
 * (another attempt took a claimed key over mid-request: 409 `idempotency_key_in_use`).
 */
export function idempotencyErrorHandler(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (error instanceof AnsweredByIdempotencyKeyError) {
    const post = res.locals.idempotentPost as RunningPost | undefined;
    if (!post) next(error);
    else if (!res.headersSent) post.answerFromKey(error.verdict);
    return;
  }
  if (!(error instanceof IdempotencyLeaseLostError)) {
    next(error);
    return;
  }
  if (!res.headersSent) sendInUse(res);
}
