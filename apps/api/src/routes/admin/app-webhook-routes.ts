import {
  type AppWebhookMessageView,
  adminActions,
  appWebhookMessageTypes,
  findAppWebhookMessage,
  listAppWebhookMessages,
  parseWebhookId,
  toAppWebhookBody,
  toAppWebhookMessageView,
} from '@tally/billing-core';
import { z } from 'zod';
import { errorAnswer } from '../../http/answer';
import { defineRoute } from '../../http/define-route';
import { cursorSchema, limitSchema, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc, nextCursorSchema } from '../../http/route-doc';
import { deliverMessage, redeliverOneMessage } from './app-webhook-actions';

const listQuerySchema = z.strictObject({
  userId: userIdSchema.optional(),
  type: z.enum(appWebhookMessageTypes).optional(),
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: limitSchema,
  cursor: cursorSchema,
});

const messageViewSchema = z.strictObject({
  id: z.string().describe('the webhook-id: msg_ and 32 hex digits'),
  type: z.enum(appWebhookMessageTypes),
  userId: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  deliveredAt: z.iso.datetime().nullable(),
});
const messageListSchema = z.strictObject({ messages: z.array(messageViewSchema), nextCursor: nextCursorSchema });
const messageWithBodySchema = messageViewSchema.extend({
  body: z.string().describe('the body as sent, byte for byte (what the signature covers)'),
});
const redeliveredSchema = z.strictObject({
  redelivered: z.literal(1),
  message: messageViewSchema,
  enqueued: z.number().int(),
  alreadyQueued: z.number().int(),
  deferred: z.number().int(),
});
/** A message's id in a path: its `msg_…` webhook-id, and the message uuid it names. */
const messageIdSchema = z.string().transform((webhookId, context) => {
  const uuid = parseWebhookId(webhookId);
  if (uuid !== undefined) return { webhookId, uuid };
  context.addIssue({ code: 'custom', message: 'a message id is msg_ and 32 hex digits (the webhook-id)' });
  return z.NEVER;
});
const badMessageId = errorDoc('an id that is not msg_ and 32 hex digits', ['invalid_request']);
const toView = (row: Parameters<typeof toAppWebhookMessageView>[0]): z.input<typeof messageViewSchema> =>
  toAppWebhookMessageView(row) satisfies AppWebhookMessageView;

/**
 * `GET /admin/app-webhooks/messages` (newest first, filters userId, type, status, cursor),
 * `GET /admin/app-webhooks/messages/{id}` with the body as sent, and
 * `POST /admin/app-webhooks/messages/{id}/redeliver` (delivered or failed messages; 409 while pending).
 */
export const appWebhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/app-webhooks/messages',
    summary: 'Outbound app webhook messages, newest first',
    query: listQuerySchema,
    answers: {
      200: answerDoc('a page of messages', messageListSchema),
      400: errorDoc('a bad filter', ['invalid_request']),
    },
    handler: async ({ query }, { db }) => {
      const page = await listAppWebhookMessages(db, { ...query, beforeId: query.cursor });
      const answer: z.input<typeof messageListSchema> = {
        messages: page.messages.map(toView),
        nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
      };
      return { status: 200, body: answer };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/app-webhooks/messages/{id}',
    summary: 'One message, with the body as sent',
    params: { id: messageIdSchema },
    answers: {
      200: answerDoc('the message', messageWithBodySchema),
      400: badMessageId,
      404: errorDoc('no such message', ['not_found']),
    },
    handler: async ({ params }, { db }) => {
      const message = await findAppWebhookMessage(db, params.id.uuid);
      if (!message) return errorAnswer(404, 'not_found', `app webhook message ${params.id.webhookId} does not exist`);
      const answer: z.input<typeof messageWithBodySchema> = { ...toView(message), body: toAppWebhookBody(message) };
      return { status: 200, body: answer };
    },
  }),
  // One transaction with its audit row; the message goes to its queue after it.
  defineRoute({
    method: 'post',
    path: '/admin/app-webhooks/messages/{id}/redeliver',
    summary: 'Send a delivered or failed message again',
    params: { id: messageIdSchema },
    audit: {
      action: adminActions.appWebhookRedeliver,
      target: { kind: 'app_webhook_message', param: 'id' },
      inTransaction: true,
    },
    answers: {
      200: answerDoc('redelivering', redeliveredSchema),
      400: errorDoc('an id that is not msg_ and 32 hex digits, or a body with fields (this takes none)', [
        'invalid_request',
      ]),
      404: errorDoc('no such message', ['not_found']),
      409: errorDoc('the message is still pending', ['not_finished']),
    },
    handler: async ({ params, audited }, services) => {
      const result = await audited(
        (trx) => redeliverOneMessage(trx, params.id.uuid, params.id.webhookId),
        (result) =>
          result.kind === 'refused'
            ? { statusCode: result.status, body: { error: { code: result.code, message: result.message } } }
            : { statusCode: 200, body: { redelivered: 1, message: toView(result.message) } },
      );
      if (result.kind === 'refused') return errorAnswer(result.status, result.code, result.message);
      const answer: z.input<typeof redeliveredSchema> = {
        redelivered: 1,
        message: toView(result.message),
        ...(await deliverMessage(services, result.message)),
      };
      return { status: 200, body: answer };
    },
  }),
];
