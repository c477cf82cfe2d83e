import { type AppWebhookOutbox, type DB, grantTokens, inUnitOfWork, references } from '@tally/billing-core';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { grantAnswerDocs, grantAnswerOf, grantBodySchema } from '../../http/grant-body';
import type { IdempotentPosts } from '../../http/idempotency';
import { parseOrAnswer } from '../../http/params';
import type { RouteDoc } from '../../http/route-doc';
import { userScopeOf } from '../../http/user-scope';

export const grantRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/users/{userId}/grants',
    summary: 'Grant promotional tokens under a reference of the app (docs/lots.md "Grants")',
    body: grantBodySchema,
    idempotent: true,
    answers: grantAnswerDocs,
  },
];

/**
 * `POST /users/{userId}/grants {amount, reference, reason?, expiresAt?}`: a promotional lot under
 * `grant:{reference}` (docs/lots.md "Grants"). The reference is the grant's own fence (a retry
 * with it grants nothing, with or without an Idempotency-Key); the key's semantics apply on top.
 */
export function createGrantRoutes(deps: {
  db: Kysely<DB>;
  outbox: AppWebhookOutbox;
  idempotency: IdempotentPosts;
}): Router {
  const router = Router();
  // Idempotent on its own (the reference): the wrapper keeps the answer under the key after it.
  router.post(
    '/grants',
    deps.idempotency.claimed(async (req, res) => {
      const { userId } = userScopeOf(res);
      const body = parseOrAnswer(grantBodySchema, req.body ?? {});
      if (!body.ok) return body.answer;
      const result = await inUnitOfWork({ db: deps.db, outbox: deps.outbox }, (uow) =>
        grantTokens(uow, {
          userId,
          reference: references.grant(body.value.reference),
          amount: body.value.amount,
          reason: body.value.reason ?? 'grant',
          expiresAt: body.value.expiresAt ?? null,
        }),
      );
      return grantAnswerOf(result);
    }),
  );
  return router;
}
