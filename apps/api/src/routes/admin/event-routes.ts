import {
  type DB,
  findInboxEvent,
  inboxStatuses,
  listInboxEvents,
  replayInboxEvent,
  replayInboxEvents,
  requeueInboxEvent,
  requeueInboxEvents,
  toInboxEventView,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { cursorSchema, eventIdSchema, limitSchema, parseOr400, userIdSchema } from '../../http/params';

const providerSchema = z.enum(['stripe', 'revenuecat']);
const outcomeCodeSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'an outcome code such as credited or invalid_event');
const listQuerySchema = z.object({
  provider: providerSchema.optional(),
  type: z.string().min(1).max(100).optional(),
  status: z.enum(inboxStatuses).optional(),
  outcome: outcomeCodeSchema.optional(),
  userId: userIdSchema.optional(),
  limit: limitSchema,
  cursor: cursorSchema,
});
const requeueFilterSchema = z.object({
  provider: providerSchema.optional(),
  type: z.string().min(1).max(100).optional(),
  userId: userIdSchema.optional(),
  outcome: outcomeCodeSchema.optional(),
  limit: z.number().int().min(1).max(10_000).default(1_000),
});
const replayFilterSchema = requeueFilterSchema.extend({ status: z.enum(['processed', 'ignored']).optional() });

/** Admin views of the inbox and the operations that put parked events back to work. */
export function createEventRoutes(deps: {
  db: Kysely<DB>;
  /** Hands ids to the queue; a failure leaves them for the relay. */
  enqueue: (inboxEventIds: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;
}): Router {
  const router = Router();
  /** Hands rows to the queue and says what happened; rows it could not hand off wait for the relay. */
  const deliver = async (ids: number[]) => {
    const { enqueued, alreadyQueued, deferred } = await deps.enqueue(ids);
    return { enqueued, alreadyQueued, deferred };
  };

  router.get('/events', async (req, res) => {
    const query = parseOr400(res, listQuerySchema, req.query);
    if (query === undefined) return;
    const page = await listInboxEvents(deps.db, { ...query, outcomeCode: query.outcome, beforeId: query.cursor });
    res.json({
      events: page.events.map(toInboxEventView),
      nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
    });
  });

  router.post('/events/requeue', async (req, res) => {
    const filter = parseOr400(res, requeueFilterSchema, req.body ?? {});
    if (filter === undefined) return;
    const ids = await requeueInboxEvents(deps.db, { ...filter, outcomeCode: filter.outcome });
    const delivery = await deliver(ids);
    res.json({ requeued: ids.length, ids, ...delivery });
  });

  // Replay re-runs finished events through the current handler; references make it safe.
  router.post('/events/replay', async (req, res) => {
    const filter = parseOr400(res, replayFilterSchema, req.body ?? {});
    if (filter === undefined) return;
    const ids = await replayInboxEvents(deps.db, { ...filter, outcomeCode: filter.outcome });
    const delivery = await deliver(ids);
    res.json({ replayed: ids.length, ids, ...delivery });
  });

  router.get('/events/:id', async (req, res) => {
    const id = parseOr400(res, eventIdSchema, req.params.id);
    if (id === undefined) return;
    const event = await findInboxEvent(deps.db, id);
    if (!event) return sendError(res, 404, 'not_found', `inbox event ${id} does not exist`);
    res.json({ ...toInboxEventView(event), rawBody: event.raw_body });
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
    const delivery = await deliver([requeued]);
    res.json({ requeued: 1, ids: [requeued], ...delivery });
  });

  router.post('/events/:id/replay', async (req, res) => {
    const id = parseOr400(res, eventIdSchema, req.params.id);
    if (id === undefined) return;
    const replayed = await replayInboxEvent(deps.db, id);
    if (replayed === null) {
      const event = await findInboxEvent(deps.db, id);
      if (!event) return sendError(res, 404, 'not_found', `inbox event ${id} does not exist`);
      return sendError(
        res,
        409,
        'not_finished',
        event.raw_body_pruned_at
          ? `inbox event ${id} lost its raw body to retention; it cannot be replayed`
          : `inbox event ${id} is ${event.status}; only processed or ignored events are replayed (requeue parked ones)`,
      );
    }
    const delivery = await deliver([replayed]);
    res.json({ replayed: 1, ids: [replayed], ...delivery });
  });

  return router;
}
