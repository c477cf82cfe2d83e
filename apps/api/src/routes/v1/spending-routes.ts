import {
  type AppWebhookOutbox,
  type CaptureAnswer,
  type Catalog,
  type Clock,
  captureHold,
  checkSpend,
  type DB,
  type DebitResult,
  debitTokens,
  defaultHoldTtlSeconds,
  type EndHoldResult,
  findHold,
  type HoldView,
  inUnitOfWork,
  listHolds,
  maxHoldTtlSeconds,
  type PlaceHoldResult,
  placeHold,
  type ReleaseAnswer,
  references,
  releaseHold,
} from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import { grantReferenceSchema, maxGrantAmount } from '../../http/grant-body';
import type { IdempotentPosts } from '../../http/idempotency';
import { bodyFieldsAnswer, parseOr400, parseOrAnswer } from '../../http/params';
import { answerDoc, errorDoc, type RouteDoc } from '../../http/route-doc';
import { userScopeOf } from '../../http/user-scope';

export interface SpendingRouteDeps {
  db: Kysely<DB>;
  /** wallet.debited (and wallet.balance_low) of debits and captures, handed off after the commit. */
  outbox: AppWebhookOutbox;
  idempotency: IdempotentPosts;
  /** `check` for a studio kind prices it from the catalog and counts the free allowance on the clock's day. */
  catalog: Catalog;
  clock: Clock;
  /** HOLD_DEFAULT_TTL_SECONDS: a hold's life when the request names none. */
  holdDefaultTtlSeconds?: number;
}

const reasonSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, { message: 'must be 1 to 64 characters of A-Z a-z 0-9 . _ : -' });
const amountSchema = z.number().int().positive().max(maxGrantAmount);

const debitBodySchema = z.strictObject({
  amount: amountSchema,
  reference: grantReferenceSchema,
  reason: reasonSchema.optional(),
});
const holdBodySchema = z.strictObject({
  amount: amountSchema,
  reference: grantReferenceSchema,
  expiresInSeconds: z.number().int().min(1).max(maxHoldTtlSeconds).optional(),
  reason: reasonSchema.optional(),
});
const captureBodySchema = z.strictObject({ amount: amountSchema.optional() });
export const holdIdSchema = z.string().regex(/^hold_[0-9a-f]{24}$/, { message: 'must be a hold id (hold_…)' });
const holdsQuerySchema = z.strictObject({
  status: z.enum(['held', 'captured', 'released', 'expired']).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
const wholeTokens = { error: `must be a whole number of tokens from 1 to ${maxGrantAmount}` };
const checkAmountSchema = z.coerce
  .number(wholeTokens)
  .int(wholeTokens)
  .positive(wholeTokens)
  .max(maxGrantAmount, wholeTokens);
const checkStudioKindSchema = z.enum(['image_edit', 'music_clip', 'music_full']);
/** Exactly one of the two; each bad value named (a union would answer only "Invalid input"). */
const checkQuerySchema = z
  .strictObject({ amount: checkAmountSchema.optional(), studioKind: checkStudioKindSchema.optional() })
  .refine((query) => (query.amount === undefined) !== (query.studioKind === undefined), {
    message: 'give exactly one of amount and studioKind',
  });

const drawSchema = z.strictObject({ lotId: z.number().int(), amount: z.number().int() });
const debitAnswerSchema = z.strictObject({
  ledgerReference: z.string().describe('debit:{reference}'),
  amount: z.number().int(),
  balance: z.number().int().describe('the balance right after the debit (the same on every retry)'),
  available: z.number().int().describe('balance less active holds: right after a new debit, now on a retry'),
  draws: z.array(drawSchema).describe('what the debit drew from each lot, in the draw order'),
});
const holdStatusSchema = z.enum(['held', 'captured', 'released', 'expired']);
const holdAnswerSchema = z.strictObject({
  id: z.string(),
  reference: z.string(),
  amount: z.number().int(),
  reason: z.string(),
  status: holdStatusSchema.describe('expired: held past expiresAt (the database clock); it counts for nothing'),
  expiresAt: z.iso.datetime(),
  captured: z.number().int().nullable(),
  released: z.number().int().nullable(),
  ledgerReference: z.string().nullable().describe('hold:{id}:capture once captured'),
  createdAt: z.iso.datetime(),
  settledAt: z.iso.datetime().nullable(),
});
const placeAnswerSchema = z.strictObject({
  id: z.string(),
  reference: z.string(),
  amount: z.number().int(),
  status: holdStatusSchema,
  expiresAt: z.iso.datetime(),
  available: z.number().int(),
});
const captureAnswerSchema = z.strictObject({
  id: z.string(),
  status: z.literal('captured'),
  captured: z.number().int(),
  released: z.number().int(),
  ledgerReference: z.string(),
  balance: z.number().int(),
  available: z.number().int(),
});
const releaseAnswerSchema = z.strictObject({
  id: z.string(),
  status: z.literal('released'),
  available: z.number().int(),
});
const checkAnswerSchema = z.strictObject({
  allowed: z.boolean(),
  amount: z.number().int().describe('what the spend would debit (a studio request: its cost, 0 on the free tier)'),
  balance: z.number().int(),
  held: z.number().int(),
  available: z.number().int(),
  cost: z.number().int().optional().describe('studioKind only: the price of the next request of that kind'),
  freeTier: z.boolean().optional().describe('studioKind only: whether the free allowance covers it'),
});
const insufficientSchema = z.strictObject({
  error: z.strictObject({ code: z.literal('insufficient_balance'), message: z.string() }),
  available: z.number().int(),
});
const holdParamsSchema = z.object({ holdId: holdIdSchema });
const insufficientDoc = answerDoc('available is short (its figure in the answer)', insufficientSchema);
const holdNotActiveDoc = errorDoc('the hold was released, captured or has expired', ['hold_not_active']);
const holdNotFoundDoc = errorDoc('no such hold for this user', ['not_found']);

/** The answer of a capture or release, for the routes that answer one (the app's and support's). */
export const releaseAnswerDocs = {
  200: answerDoc('released (or released before: the first answer again)', releaseAnswerSchema),
  400: errorDoc('a malformed hold id, or a body with fields (a release takes none)', ['invalid_request']),
  404: holdNotFoundDoc,
  409: holdNotActiveDoc,
};

export const spendingRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/users/{userId}/debits',
    summary: 'Debit tokens under a reference of the app (docs/holds.md "Debits")',
    body: debitBodySchema,
    idempotent: true,
    answers: {
      201: answerDoc('debited', debitAnswerSchema),
      200: answerDoc(
        'the same reference and amount debited before: its answer, nothing more debited',
        debitAnswerSchema,
      ),
      400: errorDoc('a bad body', ['invalid_request']),
      402: insufficientDoc,
      409: errorDoc('the reference debited another amount', ['reference_conflict']),
    },
  },
  {
    method: 'post',
    path: '/v1/users/{userId}/holds',
    summary: 'Reserve tokens for work whose cost is known at the end (docs/holds.md)',
    body: holdBodySchema,
    idempotent: true,
    answers: {
      201: answerDoc('held', placeAnswerSchema),
      200: answerDoc('the same reference held before: that hold', placeAnswerSchema),
      400: errorDoc('a bad body', ['invalid_request']),
      402: insufficientDoc,
      409: errorDoc('the reference holds another amount', ['reference_conflict']),
    },
  },
  {
    method: 'post',
    path: '/v1/users/{userId}/holds/{holdId}/capture',
    summary: 'Capture a hold: one debit of at most the held amount, the rest freed',
    params: holdParamsSchema,
    body: captureBodySchema,
    idempotent: true,
    answers: {
      200: answerDoc('captured (or captured before: the first answer again)', captureAnswerSchema),
      400: errorDoc('a malformed hold id or body, or more than the hold', ['invalid_request']),
      404: holdNotFoundDoc,
      409: holdNotActiveDoc,
    },
  },
  {
    method: 'post',
    path: '/v1/users/{userId}/holds/{holdId}/release',
    summary: 'Release a hold: its tokens are available again, no ledger row',
    params: holdParamsSchema,
    idempotent: true,
    answers: releaseAnswerDocs,
  },
  {
    method: 'get',
    path: '/v1/users/{userId}/holds/{holdId}',
    summary: 'One hold',
    params: holdParamsSchema,
    answers: {
      200: answerDoc('the hold', holdAnswerSchema),
      400: errorDoc('a malformed hold id', ['invalid_request']),
      404: holdNotFoundDoc,
    },
  },
  {
    method: 'get',
    path: '/v1/users/{userId}/holds',
    summary: "The user's holds, newest first (status=held: the active ones)",
    query: holdsQuerySchema,
    answers: {
      200: answerDoc('the holds', z.strictObject({ userId: z.string(), holds: z.array(holdAnswerSchema) })),
      400: errorDoc('a bad status or limit', ['invalid_request']),
    },
  },
  {
    method: 'get',
    path: '/v1/users/{userId}/check',
    summary: 'Whether a spend of amount, or the next studio request of studioKind, would go through now',
    // Exactly one of the two (checkQuerySchema, a union, which OpenAPI parameters cannot carry).
    query: z.object({
      amount: checkAmountSchema.optional().describe('tokens a debit or hold would need (or studioKind)'),
      studioKind: checkStudioKindSchema.optional().describe('the next studio request of this kind (or amount)'),
    }),
    answers: {
      200: answerDoc('the check (free allowance included for a studio kind)', checkAnswerSchema),
      400: errorDoc('neither amount nor studioKind, both, or a bad value', ['invalid_request']),
    },
  },
];

/**
 * The app's own spending (docs/holds.md): `POST /debits`, `POST /holds`, `POST /holds/{id}/capture`,
 * `POST /holds/{id}/release`, `GET /holds/{id}`, `GET /holds` and `GET /check`, relative to the
 * user. Every POST is idempotent on its own (the debit's ledger reference, the hold's reference,
 * the hold's status) and `claimed` by the Idempotency-Key wrapper, which keeps the answer after it.
 */
export function createSpendingRoutes(deps: SpendingRouteDeps): Router {
  const router = Router();
  const unit = { db: deps.db, outbox: deps.outbox };

  router.post(
    '/debits',
    deps.idempotency.claimed(async (req, res) => {
      const { userId } = userScopeOf(res);
      const body = parseOrAnswer(debitBodySchema, req.body ?? {});
      if (!body.ok) return body.answer;
      const result = await debitTokens(unit, {
        userId,
        reference: references.debit(body.value.reference),
        amount: body.value.amount,
        reason: body.value.reason ?? 'debit',
      });
      return debitAnswerOf(result);
    }),
  );

  router.post(
    '/holds',
    deps.idempotency.claimed(async (req, res) => {
      const { userId } = userScopeOf(res);
      const body = parseOrAnswer(holdBodySchema, req.body ?? {});
      if (!body.ok) return body.answer;
      const result = await inUnitOfWork(unit, (uow) =>
        placeHold(uow, {
          userId,
          reference: body.value.reference,
          amount: body.value.amount,
          reason: body.value.reason ?? 'hold',
          expiresInSeconds: body.value.expiresInSeconds ?? deps.holdDefaultTtlSeconds ?? defaultHoldTtlSeconds,
        }),
      );
      return placeAnswerOf(result);
    }),
  );

  router.post(
    '/holds/:holdId/capture',
    deps.idempotency.claimed(async (req, res) => {
      const { userId } = userScopeOf(res);
      const holdId = parseOrAnswer(holdIdSchema, req.params.holdId);
      if (!holdId.ok) return holdId.answer;
      const body = parseOrAnswer(captureBodySchema, req.body ?? {});
      if (!body.ok) return body.answer;
      const result = await inUnitOfWork(unit, (uow) =>
        captureHold(uow, { userId, holdId: holdId.value, amount: body.value.amount }),
      );
      return endAnswerOf(result, holdId.value);
    }),
  );

  router.post(
    '/holds/:holdId/release',
    deps.idempotency.claimed(async (req, res) => {
      const { userId } = userScopeOf(res);
      const holdId = parseOrAnswer(holdIdSchema, req.params.holdId);
      if (!holdId.ok) return holdId.answer;
      // A release frees the whole hold: `{"amount": …}` is refused, never read as a partial release.
      const refused = bodyFieldsAnswer(req);
      if (refused) return refused;
      const result = await inUnitOfWork(unit, (uow) => releaseHold(uow, { userId, holdId: holdId.value }));
      return endAnswerOf(result, holdId.value);
    }),
  );

  router.get('/holds/:holdId', async (req, res) => {
    const { userId } = userScopeOf(res);
    const holdId = parseOr400(res, holdIdSchema, req.params.holdId);
    if (holdId === undefined) return;
    const hold = await findHold(deps.db, userId, holdId);
    if (!hold) {
      res.status(404).json({ error: { code: 'not_found', message: `no hold ${holdId} for this user` } });
      return;
    }
    res.json(holdAnswerOf(hold));
  });

  router.get('/holds', async (req, res) => {
    const { userId, requestedId } = userScopeOf(res);
    const query = parseOr400(res, holdsQuerySchema, req.query, 'parameter');
    if (query === undefined) return;
    const holds = await listHolds(deps.db, userId, { status: query.status, limit: query.limit });
    res.json({ userId: requestedId, holds: holds.map(holdAnswerOf) });
  });

  router.get('/check', async (req, res) => {
    const { userId } = userScopeOf(res);
    const query = parseOr400(res, checkQuerySchema, req.query, 'parameter');
    if (query === undefined) return;
    const { amount, studioKind } = query;
    const check: z.input<typeof checkAnswerSchema> = await checkSpend(
      { db: deps.db, catalog: deps.catalog, clock: deps.clock },
      studioKind !== undefined ? { userId, studioKind } : { userId, amount: amount as number },
    );
    res.json(check);
  });

  return router;
}

/** A hold as the API answers it (docs/interface.md). */
export function holdAnswerOf(hold: HoldView): z.input<typeof holdAnswerSchema> {
  return {
    id: hold.id,
    reference: hold.reference,
    amount: hold.amount,
    reason: hold.reason,
    status: hold.status,
    expiresAt: hold.expiresAt.toISOString(),
    captured: hold.captured,
    released: hold.released,
    ledgerReference: hold.ledgerReference,
    createdAt: hold.createdAt.toISOString(),
    settledAt: hold.settledAt?.toISOString() ?? null,
  };
}

function insufficientAnswer(available: number, requested: number): RouteAnswer {
  return {
    status: 402,
    body: {
      error: {
        code: 'insufficient_balance',
        message: `${requested} tokens requested and the wallet has ${available} available`,
      },
      available,
    } satisfies z.input<typeof insufficientSchema>,
  };
}

function debitAnswerOf(result: DebitResult): RouteAnswer {
  switch (result.kind) {
    case 'debited':
      return { status: 201, body: result.answer satisfies z.input<typeof debitAnswerSchema> };
    case 'already-debited':
      return { status: 200, body: result.answer satisfies z.input<typeof debitAnswerSchema> };
    case 'conflict':
      return errorAnswer(409, 'reference_conflict', result.message);
    case 'insufficient':
      return insufficientAnswer(result.available, result.requested);
  }
}

function placeAnswerOf(result: PlaceHoldResult): RouteAnswer {
  switch (result.kind) {
    case 'placed':
    case 'existing': {
      const { id, reference, amount, status, expiresAt } = holdAnswerOf(result.hold);
      return {
        status: result.kind === 'placed' ? 201 : 200,
        body: { id, reference, amount, status, expiresAt, available: result.available } satisfies z.input<
          typeof placeAnswerSchema
        >,
      };
    }
    case 'conflict':
      return errorAnswer(409, 'reference_conflict', result.message);
    case 'insufficient':
      return insufficientAnswer(result.available, result.requested);
  }
}

/** The answer of a capture or release (the app's, and support's release: docs/interface.md). */
export function endAnswerOf(result: EndHoldResult<CaptureAnswer | ReleaseAnswer>, holdId: string): RouteAnswer {
  switch (result.kind) {
    case 'ended':
    case 'already':
      return { status: 200, body: result.answer };
    case 'not-active':
      return errorAnswer(409, 'hold_not_active', `hold ${holdId} is ${result.status}`);
    case 'not-found':
      return errorAnswer(404, 'not_found', `no hold ${holdId} for this user`);
    case 'too-much':
      return errorAnswer(400, 'invalid_request', `amount: at most the held ${result.amount} tokens can be captured`);
  }
}
