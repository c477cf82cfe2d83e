import {
  createStudioRequest,
  findStudioRequest,
  InvalidStudioRequestError,
  listStudioRequests,
  type StudioRequestReceipt,
  type StudioRequestRow,
  studioRequestStatuses,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { containsNul, limitSchema } from '../../http/params';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { orSpendLimitDoc, spendLimitAnswer } from './spending-schemas';

const createBodySchema = z.strictObject({
  kind: z.enum(['image_edit', 'music']),
  durationSeconds: z.number().int().positive().optional(),
  full: z.boolean().optional(),
  input: z
    .unknown()
    .refine((value) => value !== undefined, { message: 'is required' })
    .refine((value) => !containsNul(value), { message: 'must not contain NUL (\\u0000) characters' }),
});

/** `cursor` is an earlier page's nextCursor: the public id of that page's last request. */
const listQuerySchema = z.strictObject({ limit: limitSchema, cursor: z.string().min(1).optional() });

const studioRequestViewSchema = z.strictObject({
  id: z.string(),
  userId: z.string(),
  kind: z.enum(['image_edit', 'music']),
  durationSeconds: z.number().int().nullable(),
  full: z.boolean(),
  status: z.enum(studioRequestStatuses),
  tokensCharged: z.number().int(),
  freeTier: z.boolean(),
  priceTokens: z.number().int(),
  usageDay: z.string().describe('the UTC day (YYYY-MM-DD) whose free allowance the request used or skipped'),
  input: z.unknown(),
  result: z.unknown(),
  error: z.strictObject({ code: z.string(), message: z.string().nullable() }).nullable(),
  refunded: z.boolean(),
  attempts: z.number().int(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
  failedAt: z.iso.datetime().nullable(),
  refundedAt: z.iso.datetime().nullable(),
});

const createdAnswerSchema = z.strictObject({
  id: z.string(),
  status: z.enum(studioRequestStatuses),
  tokensCharged: z.number().int(),
  freeTier: z.boolean(),
});

const insufficientBalanceSchema = z.strictObject({
  error: z.strictObject({ code: z.literal('insufficient_balance'), message: z.string() }),
  balance: z.number().int(),
  available: z.number().int().describe('what the request could spend: balance less active holds and expired lots'),
  price: z.number().int(),
});

const listAnswerSchema = z.strictObject({
  userId: z.string(),
  requests: z.array(studioRequestViewSchema),
  nextCursor: z.string().nullable(),
});

/**
 * The public view of a studio request: the public id, never the internal one (the list's cursor
 * too). `userId` is the user the request is filed under: the canonical user of the id it was made by.
 */
export function toStudioRequestView(row: StudioRequestRow): z.input<typeof studioRequestViewSchema> {
  return {
    id: row.public_id,
    userId: row.user_id,
    kind: row.kind,
    // guard: studio-answer-schema
    durationSeconds: row.duration_seconds,
    full: row.full,
    status: row.status,
    tokensCharged: row.tokens_charged,
    freeTier: row.free_tier,
    priceTokens: row.price_tokens,
    usageDay: row.usage_day,
    input: row.input,
    result: row.result,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error },
    refunded: row.refunded_at !== null,
    attempts: row.attempts,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    failedAt: row.failed_at?.toISOString() ?? null,
    refundedAt: row.refunded_at?.toISOString() ?? null,
  };
}

/** The 202 of a created request; with an Idempotency-Key it commits with the request and its debit. */
function toCreatedAnswer(request: StudioRequestReceipt) {
  return {
    status: 202,
    body: {
      id: request.public_id,
      status: request.status,
      tokensCharged: request.tokens_charged,
      freeTier: request.free_tier,
    } satisfies z.input<typeof createdAnswerSchema>,
  };
}

/**
 * AI Studio: spend tokens (or the free allowance) on generations, and read them back. Requests
 * are made, paid for, counted against the allowance and listed as the canonical user's,
 * whichever linked id the path names.
 */
export const studioRoutes = [
  // One transaction: the request row, its debit and the key's answer commit together.
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/studio/requests',
    summary: 'Start a generation, paid with tokens or the free allowance',
    body: createBodySchema,
    idempotency: 'in-transaction',
    answers: {
      202: answerDoc('accepted: the request is queued and paid for', createdAnswerSchema),
      400: errorDoc('a body the catalog does not price', ['invalid_request']),
      402: orSpendLimitDoc(
        answerDoc('the wallet holds less than the price; nothing was written', insufficientBalanceSchema),
      ),
    },
    handler: async ({ user, body, key, log }, services) => {
      const { userId } = user;
      let created: Awaited<ReturnType<typeof createStudioRequest>>;
      try {
        created = await createStudioRequest(
          { db: services.db, outbox: services.outbox, ...services.studio, spendLimits: services.spendLimits },
          { userId, ...body },
          // guard: studio-answer-with-commit
          key && { ...key, answer: toCreatedAnswer },
        );
      } catch (error) {
        if (error instanceof InvalidStudioRequestError) return errorAnswer(400, error.code, error.message);
        throw error;
      }
      if (created.kind === 'answered-by-key') return created;
      if (created.kind === 'spend-limit') return spendLimitAnswer(created.refusal);
      if (created.kind === 'insufficient-balance') {
        return {
          status: 402,
          body: {
            error: {
              code: 'insufficient_balance',
              message: `this request costs ${created.price} tokens and the wallet has ${created.available} available`,
            },
            balance: created.balance,
            available: created.available,
            price: created.price,
          } satisfies z.input<typeof insufficientBalanceSchema>,
        };
      }
      const { request } = created;
      // After commit: the row is durable, so a queue outage only delays the generation (relay).
      try {
        const handOff = await services.studio.enqueueStudio([request.id]);
        if (handOff.deferred > 0) {
          log.warn(
            { err: handOff.error, studioRequestId: request.public_id, userId },
            'studio enqueue failed; the relay will hand the request to the queue',
          );
        }
      } catch (error) {
        log.warn({ err: error, studioRequestId: request.public_id, userId }, 'studio hand-off failed');
      }
      return { ...toCreatedAnswer(request), kept: created.answerKept };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/studio/requests/{requestId}',
    summary: 'One studio request',
    params: { requestId: z.string() },
    answers: {
      200: answerDoc('the request', studioRequestViewSchema),
      404: errorDoc('no such request for this user', ['not_found']),
    },
    handler: async ({ user, params }, { db }) => {
      const row = await findStudioRequest(db, user.userId, params.requestId);
      if (!row) return errorAnswer(404, 'not_found', 'no such studio request for this user');
      return { status: 200, body: toStudioRequestView(row) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/users/{userId}/studio/requests',
    summary: "The user's studio requests, newest first",
    query: listQuerySchema,
    answers: {
      200: answerDoc('a page of requests', listAnswerSchema),
      400: errorDoc('a bad limit or cursor', ['invalid_request']),
    },
    handler: async ({ user, query }, { db }) => {
      const page = await listStudioRequests(db, user.userId, { limit: query.limit, after: query.cursor });
      if (!page)
        return errorAnswer(400, 'invalid_request', "cursor: not a nextCursor from this user's studio requests");
      const answer: z.input<typeof listAnswerSchema> = {
        userId: user.requestedId,
        requests: page.requests.map(toStudioRequestView),
        nextCursor: page.nextCursor,
      };
      return { status: 200, body: answer };
    },
  }),
];
