import { adminActions } from '@tally/billing-core';
import { defineRoute } from '../../http/define-route';
import { adminGrantBodySchema, grantAnswerDocs, grantAnswerOf } from '../../http/grant-body';
import { eventIdSchema, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { runAdminGrant, runLotVoid, voidAnswerOf, voidAnswerSchema } from './lot-actions';

/**
 * `POST /admin/users/{userId}/grants` and `POST /admin/users/{userId}/lots/{lotId}/void`
 * (docs/lots.md "Grants"), each one transaction with its audit row.
 */
export const lotAdminRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/users/{userId}/grants',
    summary: "Support's grant of promotional tokens (a reference is generated when none is given)",
    params: { userId: userIdSchema },
    body: adminGrantBodySchema,
    // guard: audit-admin-grant-route
    audit: { action: adminActions.userGrant, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    answers: grantAnswerDocs,
    handler: async ({ params, body, audited }, services) => {
      const result = await runAdminGrant(audited, services, { userId: params.userId, body }, (result) => {
        const answer = grantAnswerOf(result);
        return { statusCode: answer.status, body: answer.body };
      });
      return grantAnswerOf(result);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/users/{userId}/lots/{lotId}/void',
    summary: 'Take back what is left of one lot',
    params: { userId: userIdSchema, lotId: eventIdSchema },
    audit: { action: adminActions.lotVoid, target: { kind: 'credit_lot', param: 'lotId' }, inTransaction: true },
    answers: {
      200: answerDoc('voided (or voided before: the first void, `alreadyVoided: true`)', voidAnswerSchema),
      400: errorDoc('a bad user or lot id, or a body with fields (a void takes none)', ['invalid_request']),
      404: errorDoc('no such lot for this user', ['not_found']),
    },
    handler: async ({ params, audited }, services) => {
      const answer = voidAnswerOf(await runLotVoid(audited, services, params, voidAnswerOf));
      return { status: answer.statusCode, body: answer.body };
    },
  }),
];
