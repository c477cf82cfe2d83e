import { grantTokens, inUnitOfWork, references } from '@tally/billing-core';
import { defineRoute } from '../../http/define-route';
import { grantAnswerDocs, grantAnswerOf, grantBodySchema } from '../../http/grant-body';

/**
 * `POST /v1/users/{userId}/grants {amount, reference, reason?, expiresAt?}`: a promotional lot under
 * `grant:{reference}` (docs/lots.md "Grants"). The reference is the grant's own fence (a retry
 * with it grants nothing, with or without an Idempotency-Key); the key's semantics apply on top.
 */
export const grantRoutes = [
  // Idempotent on its own (the reference): the key keeps the answer after it.
  defineRoute({
    method: 'post',
    path: '/v1/users/{userId}/grants',
    summary: 'Grant promotional tokens under a reference of the app (docs/lots.md "Grants")',
    body: grantBodySchema,
    idempotency: 'claimed',
    answers: grantAnswerDocs,
    handler: async ({ user, body }, { db, outbox }) => {
      const result = await inUnitOfWork({ db, outbox }, (uow) =>
        grantTokens(uow, {
          userId: user.userId,
          reference: references.grant(body.reference),
          amount: body.amount,
          reason: body.reason ?? 'grant',
          expiresAt: body.expiresAt ?? null,
          settlesDebt: body.settlesDebt ?? false,
        }),
      );
      return grantAnswerOf(result);
    },
  }),
];
