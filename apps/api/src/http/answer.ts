import type { Response } from 'express';

/**
 * What a POST route answers: returned to its idempotentPosts wrapper, which keeps it under the
 * request's Idempotency-Key when it is final and sends it (sendAnswer). A route never sends.
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

export function sendAnswer(res: Response, answer: RouteAnswer): void {
  // Answered 503 at API_ANSWER_DEADLINE_MS (http/answer-deadline.ts): this answer comes too late.
  if (res.headersSent) return;
  if (answer.headers) res.set(answer.headers);
  res.status(answer.status).json(answer.body);
}
