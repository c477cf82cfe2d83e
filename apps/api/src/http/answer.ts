import { isDatabaseUnavailableError, toHttpFailure } from '@tally/platform';
import type { Response } from 'express';

/**
 * What a route answers: returned by its handler to the mount (http/mount-routes.ts), which keeps
 * it under the request's Idempotency-Key when it is final, writes it into the audit row of an
 * audited route, and sends it (sendAnswer). A route never sends.
 */
export interface RouteAnswer {
  status: number;
  body: unknown;
  /** The answer to an error whose `retryable` flag is set (409 topup_not_paid): not final (isFinalAnswer), never kept. */
  retryable?: boolean;
  /** The use case committed this answer under the key with its effects: sent as is, not written again. */
  kept?: boolean;
  /** Sent with the answer, never kept: a replay has the status and the body. */
  headers?: Record<string, string>;
}

/** The one error shape of every Tally answer, {"error":{"code","message"}} (platform's sendError). */
export function errorAnswer(status: number, code: string, message: string): RouteAnswer {
  return { status, body: { error: { code, message } } };
}

/** A database that cannot be reached (restart, failover): a 503 the caller may retry, not a 500. */
export const databaseUnavailableAnswer = errorAnswer(
  503,
  'database_unavailable',
  'the database cannot be reached right now; retry later',
);

/** What the api's error handlers answer for an error a route threw (app.ts, then platform's jsonErrorHandler). */
export function failureAnswerOf(error: unknown): RouteAnswer {
  if (isDatabaseUnavailableError(error)) return databaseUnavailableAnswer;
  const failure = toHttpFailure(error);
  return errorAnswer(failure.status, failure.code, failure.message);
}

export function sendAnswer(res: Response, answer: RouteAnswer): void {
  // Answered 503 at API_ANSWER_DEADLINE_MS (http/answer-deadline.ts): this answer comes too late.
  if (res.headersSent) return;
  if (answer.headers) res.set(answer.headers);
  res.status(answer.status).json(answer.body);
}
