import { adminActions, listAutoTopupAttempts, readAutoTopup, resolveUserId } from '@tally/billing-core';
import { z } from 'zod';
import { autoTopupAnswerSchema, autoTopupAttemptSchema } from '../../http/auto-topup-body';
import { defineRoute } from '../../http/define-route';
import { supportNoteSchema, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc } from '../../http/route-doc';
import { runAutoTopupDisable } from './auto-topup-actions';

const supportAnswerSchema = z.strictObject({
  autoTopup: autoTopupAnswerSchema,
  attempts: z.array(autoTopupAttemptSchema).describe('newest first, at most 20'),
});

const disableBodySchema = z.strictObject({
  note: supportNoteSchema,
});

const disableAnswerSchema = z.strictObject({
  userId: z.string(),
  disabled: z.boolean().describe('false when it was already off'),
});

/**
 * Support's side of auto top-up (docs/auto-topup.md): the settings and attempts of a user, and the
 * console's button to turn it off (`auto_topup.disable`, audited in the same transaction; the app
 * is told with `wallet.auto_topup_disabled`, reason `operator`).
 */
export const autoTopupAdminRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/users/{userId}/auto-topup',
    summary: "A user's auto top-up settings, saved card and latest attempts",
    params: { userId: userIdSchema },
    answers: { 200: answerDoc('the auto top-up and its attempts', supportAnswerSchema) },
    handler: async ({ params }, { db }) => {
      const userId = await resolveUserId(db, params.userId);
      const [view, attempts] = await Promise.all([readAutoTopup(db, userId), listAutoTopupAttempts(db, userId)]);
      return {
        status: 200,
        body: { autoTopup: { ...view, userId: params.userId }, attempts } satisfies z.input<typeof supportAnswerSchema>,
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/users/{userId}/auto-topup/disable',
    summary: "Turn a user's auto top-up off (audited); the app enabling it again turns it back on",
    params: { userId: userIdSchema },
    body: disableBodySchema,
    // guard: audit-auto-topup-disable-route
    audit: { action: adminActions.autoTopupDisable, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    answers: {
      200: answerDoc('turned off (disabled false: it was off already)', disableAnswerSchema),
      400: errorDoc('a bad user id or body (the note is required)', ['invalid_request']),
    },
    handler: async ({ params, audited }, services) => {
      const body = (disabled: boolean) => ({ userId: params.userId, disabled });
      const disabled = await runAutoTopupDisable(audited, services, params.userId, (disabled) => ({
        statusCode: 200,
        body: body(disabled),
      }));
      return { status: 200, body: body(disabled) satisfies z.input<typeof disableAnswerSchema> };
    },
  }),
];
