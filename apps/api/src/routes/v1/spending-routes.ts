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
import { parseOr400, parseOrAnswer } from '../../http/params';
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

const debitBodySchema = z.object({
  amount: amountSchema,
  reference: grantReferenceSchema,
  reason: reasonSchema.optional(),
});
const holdBodySchema = z.object({
  amount: amountSchema,
  reference: grantReferenceSchema,
  expiresInSeconds: z.number().int().min(1).max(maxHoldTtlSeconds).optional(),
  reason: reasonSchema.optional(),
});
const captureBodySchema = z.object({ amount: amountSchema.optional() });
export const holdIdSchema = z.string().regex(/^hold_[0-9a-f]{24}$/, { message: 'must be a hold id (hold_…)' });
const holdsQuerySchema = z.object({
  status: z.enum(['held', 'captured', 'released', 'expired']).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
const checkQuerySchema = z.union([
  z.object({ amount: z.coerce.number().int().positive().max(maxGrantAmount) }).strict(),
  z.object({ studioKind: z.enum(['image_edit', 'music_clip', 'music_full']) }).strict(),
]);

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
    const query = parseOr400(res, holdsQuerySchema, req.query);
    if (query === undefined) return;
    const holds = await listHolds(deps.db, userId, { status: query.status, limit: query.limit });
    res.json({ userId: requestedId, holds: holds.map(holdAnswerOf) });
  });

  router.get('/check', async (req, res) => {
    const { userId } = userScopeOf(res);
    const query = parseOr400(res, checkQuerySchema, req.query);
    if (query === undefined) return;
    res.json(await checkSpend({ db: deps.db, catalog: deps.catalog, clock: deps.clock }, { userId, ...query }));
  });

  return router;
}

/** A hold as the API answers it (docs/interface.md). */
export function holdAnswerOf(hold: HoldView) {
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
    },
  };
}

function debitAnswerOf(result: DebitResult): RouteAnswer {
  switch (result.kind) {
    case 'debited':
      return { status: 201, body: result.answer };
    case 'already-debited':
      return { status: 200, body: result.answer };
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
        body: { id, reference, amount, status, expiresAt, available: result.available },
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
