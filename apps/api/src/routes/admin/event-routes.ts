import {
  adminActions,
  type DB,
  findInboxEvent,
  inboxSources,
  inboxStatuses,
  listInboxEvents,
  paymentEnvironments,
  providers,
  replayInboxEvents,
  requeueInboxEvents,
  toInboxEventView,
} from '@tally/billing-core';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import { errorAnswer, type RouteAnswer } from '../../http/answer';
import type { AuditedTransaction } from '../../http/audit-admin-actions';
import { defineRoute } from '../../http/define-route';
import { cursorSchema, eventIdSchema, limitSchema, userIdSchema } from '../../http/params';
import { answerDoc, errorDoc, nextCursorSchema } from '../../http/route-doc';
import {
  deliver,
  type InboxActionDeps,
  type InboxActionResult,
  replayOneEvent,
  requeueOneEvent,
} from './inbox-actions';

// guard: admin-provider-list
const providerSchema = z.enum(providers);
const outcomeCodeSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'an outcome code such as credited or invalid_event');
const listQuerySchema = z.strictObject({
  provider: providerSchema.optional(),
  type: z.string().min(1).max(100).optional(),
  status: z.enum(inboxStatuses).optional(),
  outcome: outcomeCodeSchema.optional(),
  userId: userIdSchema.optional(),
  limit: limitSchema,
  cursor: cursorSchema,
});
const requeueFilterSchema = z.strictObject({
  provider: providerSchema.optional(),
  type: z.string().min(1).max(100).optional(),
  userId: userIdSchema.optional(),
  outcome: outcomeCodeSchema.optional(),
  limit: z.number().int().min(1).max(10_000).default(1_000),
});
const replayFilterSchema = requeueFilterSchema.extend({ status: z.enum(['processed', 'ignored']).optional() });

/** How an inbox row is shown to operators (toInboxEventView): the admin API, the support view, the CLI. */
export const inboxEventViewSchema = z.strictObject({
  id: z.number().int(),
  provider: providerSchema,
  providerEventId: z.string(),
  type: z.string(),
  livemode: z.boolean().nullable(),
  environment: z.enum(paymentEnvironments).nullable(),
  userId: z.string().nullable(),
  providerCustomerId: z.string().nullable(),
  providerSubscriptionId: z.string().nullable(),
  providerPaymentIntentId: z.string().nullable(),
  providerInvoiceId: z.string().nullable(),
  status: z.enum(inboxStatuses),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  outcome: z.strictObject({ code: z.string(), detail: z.string().nullable() }).nullable(),
  nextAttemptAt: z.date().nullable(),
  waitingSince: z.date().nullable(),
  deferrals: z.number().int(),
  replays: z.number().int(),
  replayedAt: z.date().nullable(),
  receivedAt: z.date(),
  processedAt: z.date().nullable(),
  updatedAt: z.date(),
  source: z.enum(inboxSources),
  rawBodyPrunedAt: z.date().nullable(),
});
const eventListSchema = z.strictObject({ events: z.array(inboxEventViewSchema), nextCursor: nextCursorSchema });
const eventWithBodySchema = inboxEventViewSchema.extend({
  rawBody: z.string().nullable().describe('null once retention pruned it'),
});

const handOffSchema = {
  ids: z.array(z.number().int()),
  enqueued: z.number().int(),
  alreadyQueued: z.number().int(),
  deferred: z.number().int().describe('ids the queue could not take now: the relay hands them over'),
};
const requeuedSchema = z.strictObject({ requeued: z.number().int(), ...handOffSchema });
const replayedSchema = z.strictObject({ replayed: z.number().int(), ...handOffSchema });
const badId = errorDoc('an id that is not a positive whole number', ['invalid_request']);
const badIdOrBody = errorDoc('an id that is not a positive whole number, or a body with fields (this takes none)', [
  'invalid_request',
]);

/**
 * What an action answers as of its commit, which its audit row records: the ids it reset, or the
 * refusal. The HTTP answer adds the queue hand-off, which happens after the commit.
 */
const committedAnswer = (result: InboxActionResult, verb: 'requeued' | 'replayed') =>
  result.kind === 'refused'
    ? { statusCode: result.status, body: { error: { code: result.code, message: result.message } } }
    : { statusCode: 200, body: { [verb]: result.ids.length, ids: result.ids } };

/** Runs an action in its transaction with its audit row, then hands the ids it reset to the queue. */
async function act(
  audited: AuditedTransaction,
  deps: InboxActionDeps,
  verb: 'requeued' | 'replayed',
  run: (trx: Transaction<DB>) => Promise<InboxActionResult>,
): Promise<RouteAnswer> {
  const result = await audited(run, (result) => committedAnswer(result, verb));
  if (result.kind === 'refused') return errorAnswer(result.status, result.code, result.message);
  const handOff = await deliver(deps, result.ids);
  const answer: z.input<typeof requeuedSchema> | z.input<typeof replayedSchema> =
    verb === 'requeued'
      ? { requeued: result.ids.length, ids: result.ids, ...handOff }
      : { replayed: result.ids.length, ids: result.ids, ...handOff };
  return { status: 200, body: answer };
}
const done = (ids: number[]): InboxActionResult => ({ kind: 'done', ids });

/**
 * Admin views of the inbox and the operations that put parked events back to work. Each
 * operation is one transaction with its audit row; the ids go to the queue after it.
 */
export const eventRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/events',
    summary: 'Inbox events, newest first',
    query: listQuerySchema,
    answers: {
      200: answerDoc('a page of events', eventListSchema),
      400: errorDoc('a bad filter', ['invalid_request']),
    },
    handler: async ({ query }, { db }) => {
      const page = await listInboxEvents(db, { ...query, outcomeCode: query.outcome, beforeId: query.cursor });
      const answer: z.input<typeof eventListSchema> = {
        events: page.events.map(toInboxEventView),
        nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
      };
      return { status: 200, body: answer };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/events/requeue',
    summary: 'Requeue parked (failed) events matching a filter',
    body: requeueFilterSchema,
    audit: { action: adminActions.inboxRequeueByFilter, inTransaction: true },
    answers: {
      200: answerDoc('what was requeued', requeuedSchema),
      400: errorDoc('a bad filter', ['invalid_request']),
    },
    handler: ({ body, audited }, services) =>
      act(audited, services, 'requeued', async (trx) =>
        done(await requeueInboxEvents(trx, { ...body, outcomeCode: body.outcome })),
      ),
  }),
  // Replay re-runs finished events through the current handler; references make it safe.
  defineRoute({
    method: 'post',
    path: '/admin/events/replay',
    summary: 'Replay finished events matching a filter through the current handler',
    body: replayFilterSchema,
    audit: { action: adminActions.inboxReplayByFilter, inTransaction: true },
    answers: {
      200: answerDoc('what was replayed', replayedSchema),
      400: errorDoc('a bad filter', ['invalid_request']),
    },
    handler: ({ body, audited }, services) =>
      act(audited, services, 'replayed', async (trx) =>
        done(await replayInboxEvents(trx, { ...body, outcomeCode: body.outcome })),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/admin/events/{id}',
    summary: 'One inbox event with its raw body',
    params: { id: eventIdSchema },
    answers: {
      200: answerDoc('the event', eventWithBodySchema),
      400: badId,
      404: errorDoc('no such event', ['not_found']),
    },
    handler: async ({ params }, { db }) => {
      const event = await findInboxEvent(db, params.id);
      if (!event) return errorAnswer(404, 'not_found', `inbox event ${params.id} does not exist`);
      const answer: z.input<typeof eventWithBodySchema> = { ...toInboxEventView(event), rawBody: event.raw_body };
      return { status: 200, body: answer };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/events/{id}/requeue',
    summary: 'Requeue one parked event',
    params: { id: eventIdSchema },
    audit: { action: adminActions.inboxRequeue, target: { kind: 'inbox_event', param: 'id' }, inTransaction: true },
    answers: {
      200: answerDoc('requeued', requeuedSchema),
      400: badIdOrBody,
      404: errorDoc('no such event', ['not_found']),
      409: errorDoc('the event is not parked', ['not_parked']),
    },
    handler: ({ params, audited }, services) =>
      act(audited, services, 'requeued', (trx) => requeueOneEvent(trx, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/admin/events/{id}/replay',
    summary: 'Replay one finished event',
    params: { id: eventIdSchema },
    audit: { action: adminActions.inboxReplay, target: { kind: 'inbox_event', param: 'id' }, inTransaction: true },
    answers: {
      200: answerDoc('replayed', replayedSchema),
      400: badIdOrBody,
      404: errorDoc('no such event', ['not_found']),
      409: errorDoc('the event is not finished, or lost its raw body to retention', ['not_finished']),
    },
    handler: ({ params, audited }, services) =>
      act(audited, services, 'replayed', (trx) => replayOneEvent(trx, params.id)),
  }),
];
