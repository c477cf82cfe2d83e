import {
  type DB,
  findInboxEvent,
  type InboxEventSummary,
  inboxStatuses,
  listInboxEvents,
  requeueInboxEvent,
  requeueInboxEvents,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { cursorSchema, eventIdSchema, limitSchema, parseOr400, userIdSchema } from '../../http/params';

const providerSchema = z.enum(['stripe', 'revenuecat']);
const listQuerySchema = z.object({
  provider: providerSchema.optional(),
  type: z.string().min(1).max(100).optional(),
  status: z.enum(inboxStatuses).optional(),
  userId: userIdSchema.optional(),
  limit: limitSchema,
  cursor: cursorSchema,
});
const requeueFilterSchema = z.object({
  provider: providerSchema.optional(),
  type: z.string().min(1).max(100).optional(),
  userId: userIdSchema.optional(),
  limit: z.number().int().min(1).max(10_000).default(1_000),
});

export function toEventView(event: InboxEventSummary) {
  return {
    id: event.id,
    provider: event.provider,
    providerEventId: event.provider_event_id,
    type: event.type,
    livemode: event.livemode,
    environment: event.environment,
    userId: event.user_id,
    providerCustomerId: event.provider_customer_id,
    providerSubscriptionId: event.provider_subscription_id,
    providerPaymentIntentId: event.provider_payment_intent_id,
    providerInvoiceId: event.provider_invoice_id,
    status: event.status,
    attempts: event.attempts,
    lastError: event.last_error,
    outcome: event.outcome,
    receivedAt: event.received_at.toISOString(),
    processedAt: event.processed_at?.toISOString() ?? null,
    updatedAt: event.updated_at.toISOString(),
  };
}

/** Admin views of the inbox and the operations that put parked events back to work. */
export function createEventRoutes(deps: {
  db: Kysely<DB>;
  /** Hands ids to the queue; a failure leaves them for the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<{ enqueued: number; deferred: number }>;
}): Router {
  const router = Router();

  router.get('/events', async (req, res) => {
    const query = parseOr400(res, listQuerySchema, req.query);
    if (query === undefined) return;
    const page = await listInboxEvents(deps.db, { ...query, beforeId: query.cursor });
    res.json({
      events: page.events.map(toEventView),
      nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
    });
  });

  router.post('/events/requeue', async (req, res) => {
    const filter = parseOr400(res, requeueFilterSchema, req.body ?? {});
    if (filter === undefined) return;
    const ids = await requeueInboxEvents(deps.db, filter);
    const delivery = await deps.enqueue(ids);
    res.json({ requeued: ids.length, ids, ...delivery });
  });

  router.get('/events/:id', async (req, res) => {
    const id = parseOr400(res, eventIdSchema, req.params.id);
    if (id === undefined) return;
    const event = await findInboxEvent(deps.db, id);
    if (!event) return sendError(res, 404, 'not_found', `inbox event ${id} does not exist`);
    res.json({ ...toEventView(event), rawBody: event.raw_body });
  });

  router.post('/events/:id/requeue', async (req, res) => {
    const id = parseOr400(res, eventIdSchema, req.params.id);
    if (id === undefined) return;
    const requeued = await requeueInboxEvent(deps.db, id);
    if (requeued === null) {
      const event = await findInboxEvent(deps.db, id);
      if (!event) return sendError(res, 404, 'not_found', `inbox event ${id} does not exist`);
      return sendError(res, 409, 'not_parked', `inbox event ${id} is ${event.status}; only failed events are requeued`);
    }
    const delivery = await deps.enqueue([requeued]);
    res.json({ requeued: 1, ids: [requeued], ...delivery });
  });

  return router;
}
