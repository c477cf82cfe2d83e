import {
  findInboxEvent,
  inboxStatuses,
  listInboxEvents,
  replayInboxEvents,
  requeueInboxEvents,
  toInboxEventView,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { type Response, Router } from 'express';
import { z } from 'zod';
import { cursorSchema, eventIdSchema, limitSchema, parseOr400, userIdSchema } from '../../http/params';
import {
  deliver,
  type InboxActionDeps,
  type InboxActionOutcome,
  replayOneEvent,
  requeueOneEvent,
} from './inbox-actions';

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
export function createEventRoutes(deps: InboxActionDeps): Router {
  const router = Router();
  const answer = (res: Response, outcome: InboxActionOutcome, verb: 'requeued' | 'replayed') => {
    if (outcome.kind === 'refused') return sendError(res, outcome.status, outcome.code, outcome.message);
    const { kind: _kind, ids, ...delivery } = outcome;
    res.json({ [verb]: ids.length, ids, ...delivery });
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
    const delivery = await deliver(deps, ids);
    res.json({ requeued: ids.length, ids, ...delivery });
  });

  // Replay re-runs finished events through the current handler; references make it safe.
  router.post('/events/replay', async (req, res) => {
    const filter = parseOr400(res, replayFilterSchema, req.body ?? {});
    if (filter === undefined) return;
    const ids = await replayInboxEvents(deps.db, { ...filter, outcomeCode: filter.outcome });
    const delivery = await deliver(deps, ids);
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
    answer(res, await requeueOneEvent(deps, id), 'requeued');
  });

  router.post('/events/:id/replay', async (req, res) => {
    const id = parseOr400(res, eventIdSchema, req.params.id);
    if (id === undefined) return;
    answer(res, await replayOneEvent(deps, id), 'replayed');
  });

  return router;
}
