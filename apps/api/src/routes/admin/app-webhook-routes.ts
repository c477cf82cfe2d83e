import {
  type AppWebhookMessageView,
  appWebhookMessageTypes,
  findAppWebhookMessage,
  listAppWebhookMessages,
  parseWebhookId,
  toAppWebhookBody,
  toAppWebhookMessageView,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { type Response, Router } from 'express';
import { z } from 'zod';
import { appWebhookDeliveries } from '../../app-webhook-delivery';
import { runAuditedRequest } from '../../http/audit-admin-actions';
import { cursorSchema, limitSchema, parseOr400, refusedBodyFields, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc, nextCursorSchema, type RouteDoc } from '../../http/route-doc';
import { type AppWebhookActionDeps, deliverMessage, redeliverOneMessage } from './app-webhook-actions';

const listQuerySchema = z.strictObject({
  userId: userIdSchema.optional(),
  type: z.enum(appWebhookMessageTypes).optional(),
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: limitSchema,
  cursor: cursorSchema,
});

export type AppWebhookRoutesDeps = AppWebhookActionDeps;

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
const deliverySchema = z
  .enum(appWebhookDeliveries)
  .describe('not_configured: APP_WEBHOOK_URL is not set, so pending messages wait for it rather than for a retry');
const messageListSchema = z.strictObject({
  messages: z.array(messageViewSchema),
  nextCursor: nextCursorSchema,
  delivery: deliverySchema,
});
const messageWithBodySchema = messageViewSchema.extend({
  body: z.string().describe('the body as sent, byte for byte (what the signature covers)'),
  delivery: deliverySchema,
});
const redeliveredSchema = z.strictObject({
  redelivered: z.literal(1),
  message: messageViewSchema,
  enqueued: z.number().int(),
  alreadyQueued: z.number().int(),
  deferred: z.number().int(),
});
const messageParams = z.object({ id: z.string() });
const badMessageId = errorDoc('an id that is not msg_ and 32 hex digits', ['invalid_request']);
const toView = (row: Parameters<typeof toAppWebhookMessageView>[0]): z.input<typeof messageViewSchema> =>
  toAppWebhookMessageView(row) satisfies AppWebhookMessageView;

export const appWebhookRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/admin/app-webhooks/messages',
    summary: 'Outbound app webhook messages, newest first',
    query: listQuerySchema,
    answers: {
      200: answerDoc('a page of messages', messageListSchema),
      400: errorDoc('a bad filter', ['invalid_request']),
    },
  },
  {
    method: 'get',
    path: '/admin/app-webhooks/messages/{id}',
    summary: 'One message, with the body as sent',
    params: messageParams,
    answers: {
      200: answerDoc('the message', messageWithBodySchema),
      400: badMessageId,
      404: errorDoc('no such message', ['not_found']),
    },
  },
  {
    method: 'post',
    path: '/admin/app-webhooks/messages/{id}/redeliver',
    summary: 'Send a delivered or failed message again',
    params: messageParams,
    answers: {
      200: answerDoc('redelivering', redeliveredSchema),
      400: errorDoc('an id that is not msg_ and 32 hex digits, or a body with fields (this takes none)', [
        'invalid_request',
      ]),
      404: errorDoc('no such message', ['not_found']),
      409: errorDoc('the message is still pending', ['not_finished']),
    },
  },
];

/** The message uuid of a path's `msg_…` id, or a 400 saying what an id looks like. */
function messageUuidOr400(res: Response, id: string | undefined): string | undefined {
  const uuid = id === undefined ? undefined : parseWebhookId(id);
  if (uuid === undefined)
    sendError(res, 400, 'invalid_request', 'a message id is msg_ and 32 hex digits (the webhook-id)');
  return uuid;
}

/**
 * `GET /admin/app-webhooks/messages` (newest first, filters userId, type, status, cursor),
 * `GET /admin/app-webhooks/messages/{id}` with the body as sent, and
 * `POST /admin/app-webhooks/messages/{id}/redeliver` (delivered or failed messages; 409 while pending).
 */
export function createAppWebhookRoutes(deps: AppWebhookRoutesDeps): Router {
  const router = Router();

  router.get('/app-webhooks/messages', async (req, res) => {
    const query = parseOr400(res, listQuerySchema, req.query, 'parameter');
    if (query === undefined) return;
    const page = await listAppWebhookMessages(deps.db, { ...query, beforeId: query.cursor });
    const answer: z.input<typeof messageListSchema> = {
      messages: page.messages.map(toView),
      nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
      delivery: deps.appWebhookDelivery ?? 'on',
    };
    res.json(answer);
  });

  router.get('/app-webhooks/messages/:id', async (req, res) => {
    const uuid = messageUuidOr400(res, req.params.id);
    if (uuid === undefined) return;
    const message = await findAppWebhookMessage(deps.db, uuid);
    if (!message) return sendError(res, 404, 'not_found', `app webhook message ${req.params.id} does not exist`);
    const answer: z.input<typeof messageWithBodySchema> = {
      ...toView(message),
      body: toAppWebhookBody(message),
      delivery: deps.appWebhookDelivery ?? 'on',
    };
    res.json(answer);
  });

  // One transaction with its audit row (runAuditedRequest); the message goes to its queue after it.
  router.post('/app-webhooks/messages/:id/redeliver', async (req, res) => {
    const uuid = messageUuidOr400(res, req.params.id);
    if (uuid === undefined || refusedBodyFields(req, res)) return;
    const result = await runAuditedRequest(
      req,
      res,
      deps.db,
      (trx) => redeliverOneMessage(trx, uuid, req.params.id),
      (result) =>
        result.kind === 'refused'
          ? { statusCode: result.status, body: { error: { code: result.code, message: result.message } } }
          : { statusCode: 200, body: { redelivered: 1, message: toView(result.message) } },
    );
    if (result.kind === 'refused') return sendError(res, result.status, result.code, result.message);
    const answer: z.input<typeof redeliveredSchema> = {
      redelivered: 1,
      message: toView(result.message),
      ...(await deliverMessage(deps, result.message)),
    };
    res.json(answer);
  });

  return router;
}
