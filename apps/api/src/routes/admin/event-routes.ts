import {
  type DB,
  findInboxEvent,
  inboxStatuses,
  listInboxEvents,
  providers,
  replayInboxEvents,
  requeueInboxEvents,
  toInboxEventView,
} from '@tally/billing-core';
import { sendError } from '@tally/platform';
import { type Request, type Response, Router } from 'express';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import { runAuditedRequest } from '../../http/audit-admin-actions';
import { cursorSchema, eventIdSchema, limitSchema, parseOr400, userIdSchema } from '../../http/params';
import {
  deliver,
  type InboxActionDeps,
  type InboxActionResult,
  replayOneEvent,
  requeueOneEvent,
} from './inbox-actions';

const providerSchema = z.enum(providers);
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

/**
 * What an action answers as of its commit, which its audit row records: the ids it reset, or the
 * refusal. The HTTP answer adds the queue hand-off, which happens after the commit.
 */
const committedAnswer = (result: InboxActionResult, verb: 'requeued' | 'replayed') =>
  result.kind === 'refused'
    ? { statusCode: result.status, body: { error: { code: result.code, message: result.message } } }
    : { statusCode: 200, body: { [verb]: result.ids.length, ids: result.ids } };

/**
 * Admin views of the inbox and the operations that put parked events back to work. Each
 * operation is one transaction with its audit row (runAuditedRequest); the ids go to the queue after it.
 */
export function createEventRoutes(deps: InboxActionDeps): Router {
  const router = Router();
  /** Runs an action in its transaction with its audit row, then hands the ids it reset to the queue. */
  const act = async (
    req: Request,
    res: Response,
    verb: 'requeued' | 'replayed',
    run: (trx: Transaction<DB>) => Promise<InboxActionResult>,
  ) => {
    const result = await runAuditedRequest(req, res, deps.db, run, (result) => committedAnswer(result, verb));
    if (result.kind === 'refused') return sendError(res, result.status, result.code, result.message);
    res.json({ [verb]: result.ids.length, ids: result.ids, ...(await deliver(deps, result.ids)) });
  };
  const done = (ids: number[]): InboxActionResult => ({ kind: 'done', ids });

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
    await act(req, res, 'requeued', async (trx) =>
      done(await requeueInboxEvents(trx, { ...filter, outcomeCode: filter.outcome })),
    );
  });

  // Replay re-runs finished events through the current handler; references make it safe.
  router.post('/events/replay', async (req, res) => {
    const filter = parseOr400(res, replayFilterSchema, req.body ?? {});
    if (filter === undefined) return;
    await act(req, res, 'replayed', async (trx) =>
      done(await replayInboxEvents(trx, { ...filter, outcomeCode: filter.outcome })),
    );
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
    await act(req, res, 'requeued', (trx) => requeueOneEvent(trx, id));
  });

  router.post('/events/:id/replay', async (req, res) => {
    const id = parseOr400(res, eventIdSchema, req.params.id);
    if (id === undefined) return;
    await act(req, res, 'replayed', (trx) => replayOneEvent(trx, id));
  });

  return router;
}
