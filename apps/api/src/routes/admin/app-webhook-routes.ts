import {
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
import { runAuditedRequest } from '../../http/audit-admin-actions';
import { cursorSchema, limitSchema, parseOr400, userIdSchema } from '../../http/params';
import { type AppWebhookActionDeps, deliverMessage, redeliverOneMessage } from './app-webhook-actions';

const listQuerySchema = z.object({
  userId: userIdSchema.optional(),
  type: z.enum(appWebhookMessageTypes).optional(),
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: limitSchema,
  cursor: cursorSchema,
});

export type AppWebhookRoutesDeps = AppWebhookActionDeps;

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
    const query = parseOr400(res, listQuerySchema, req.query);
    if (query === undefined) return;
    const page = await listAppWebhookMessages(deps.db, { ...query, beforeId: query.cursor });
    res.json({
      messages: page.messages.map(toAppWebhookMessageView),
      nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
    });
  });

  router.get('/app-webhooks/messages/:id', async (req, res) => {
    const uuid = messageUuidOr400(res, req.params.id);
    if (uuid === undefined) return;
    const message = await findAppWebhookMessage(deps.db, uuid);
    if (!message) return sendError(res, 404, 'not_found', `app webhook message ${req.params.id} does not exist`);
    res.json({ ...toAppWebhookMessageView(message), body: toAppWebhookBody(message) });
  });

  // One transaction with its audit row (runAuditedRequest); the message goes to its queue after it.
  router.post('/app-webhooks/messages/:id/redeliver', async (req, res) => {
    const uuid = messageUuidOr400(res, req.params.id);
    if (uuid === undefined) return;
    const result = await runAuditedRequest(
      req,
      res,
      deps.db,
      (trx) => redeliverOneMessage(trx, uuid, req.params.id),
      (result) =>
        result.kind === 'refused'
          ? { statusCode: result.status, body: { error: { code: result.code, message: result.message } } }
          : { statusCode: 200, body: { redelivered: 1, message: toAppWebhookMessageView(result.message) } },
    );
    if (result.kind === 'refused') return sendError(res, result.status, result.code, result.message);
    res.json({
      redelivered: 1,
      message: toAppWebhookMessageView(result.message),
      ...(await deliverMessage(deps, result.message)),
    });
  });

  return router;
}
