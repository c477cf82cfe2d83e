import { randomUUID } from 'node:crypto';
import {
  appWebhookMessageTypes,
  BillingError,
  type DB,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  findAppWebhookMessage,
  findBalanceSeries,
  findInboxEvent,
  findOldestDueAgeSeconds,
  findSupportMatches,
  findUserSupportView,
  inboxStatuses,
  listAdminActions,
  listAppWebhookMessages,
  listInboxEvents,
  parseWebhookId,
  providers,
  readAppWebhookGauges,
  readHourlyActivity,
  readOperationalStates,
  reconcileStripe,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
  type StripeApi,
  type StripeReconciliationReport,
  summarizeReconciliation,
  toAppWebhookBody,
  toAppWebhookMessageView,
  toInboxEventView,
} from '@tally/billing-core';
import { type ProducerQueue, readQueueDepths } from '@tally/platform';
import express, { type Request, type Response, Router } from 'express';
import helmet from 'helmet';
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import { auditAnswerKey, runAuditedRequest } from '../http/audit-admin-actions';
import { adminGrantBodySchema, grantAnswerOf } from '../http/grant-body';
import { cursorSchema, eventIdSchema, userIdSchema } from '../http/params';
import { type AppWebhookActionDeps, deliverMessage, redeliverOneMessage } from '../routes/admin/app-webhook-actions';
import { runHoldRelease } from '../routes/admin/hold-actions';
import {
  deliver,
  type InboxActionDeps,
  type InboxActionResult,
  replayOneEvent,
  requeueOneEvent,
} from '../routes/admin/inbox-actions';
import { type LotActionDeps, runAdminGrant, runLotVoid, voidAnswerOf } from '../routes/admin/lot-actions';
import { endAnswerOf, holdIdSchema } from '../routes/v1/spending-routes';
import { consoleCss } from './console-css';
import { html, queryString } from './html';
import { consoleBase, page } from './layout';
import { messagePage, messageStatuses, messagesPage } from './pages/app-webhook-pages';
import { eventPage, inboxPage } from './pages/inbox-pages';
import { auditPage, reconcilePage, searchPage } from './pages/other-pages';
import { overviewPage } from './pages/overview-page';
import { userPage } from './pages/user-page';

/** The console's grant form: the admin grant's body, the note required. */
const consoleGrantSchema = adminGrantBodySchema.extend({ note: z.string().trim().min(1).max(1000) });

export interface ConsoleDeps extends InboxActionDeps, AppWebhookActionDeps, LotActionDeps {
  db: Kysely<DB>;
  stripe?: StripeApi | undefined;
  /** The catalog queues, for the overview's depths (the dashboard's handles). */
  queues: readonly ProducerQueue<unknown>[];
}

const PAGE_SIZE = 50;
const LEDGER_PAGE_SIZE = 50;
/** The user page shows this many of the user's newest messages (the messages page has the rest). */
const USER_MESSAGES = 10;

/** Empty form fields and query parameters mean "no filter". */
const optional = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const inboxQuerySchema = z.object({
  provider: optional(z.enum(providers)),
  type: optional(z.string().max(100)),
  status: optional(z.enum(inboxStatuses)),
  outcome: optional(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/)),
  userId: optional(userIdSchema),
  cursor: optional(cursorSchema),
  notice: optional(z.string().max(40)),
});
const messagesQuerySchema = z.object({
  status: optional(z.enum(messageStatuses)),
  type: optional(z.enum(appWebhookMessageTypes)),
  userId: optional(userIdSchema),
  cursor: optional(cursorSchema),
  notice: optional(z.string().max(40)),
});
const reconcileFormSchema = z.object({
  windowDays: z.coerce.number().positive().max(STRIPE_EVENTS_MAX_WINDOW_DAYS).default(DEFAULT_RECONCILE_WINDOW_DAYS),
  dryRun: z.preprocess((value) => value === 'true' || value === 'on', z.boolean()),
});

/**
 * Security headers of every console answer: a CSP that allows only the console's own stylesheet
 * and forms (no script at all), no framing by anyone (frame-ancestors 'none' and X-Frame-Options
 * DENY), nosniff, referrers only to the console's own origin. Mounted ahead of the key check, so a
 * 401 or 403 from the console's paths carries them too; scoped to the console, so it adds to
 * whatever the app sets elsewhere.
 */
export const consoleHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  },
  frameguard: { action: 'deny' },
  // Not 'no-referrer': with it a browser sends `Origin: null` on the console's own form POSTs,
  // which the same-origin rule (rightly) refuses.
  referrerPolicy: { policy: 'same-origin' },
});

/**
 * The console at /admin/console (docs/console.md): server-rendered pages over the support view,
 * the inbox, the app-webhook messages, the metrics' reads and the audit, with requeue, replay,
 * redeliver and reconcile as POST forms.
 * Mount it behind `consoleHeaders`, `requireAdminKeyOrBasic` (Basic auth, same-origin POSTs) and
 * the audit.
 */
export function createConsoleRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  const delivery = deps.appWebhookDelivery ?? 'on';
  router.use(express.urlencoded({ extended: false, limit: '10kb' }));
  const send = (res: Response, body: string, status = 200) => {
    res.status(status).type('html').set('Cache-Control', 'no-store').send(body);
  };

  router.get('/console.css', (_req, res) => {
    res.type('css').set('Cache-Control', 'private, max-age=300').send(consoleCss);
  });

  router.get('/', async (_req, res) => {
    const [depths, oldestDueAgeSeconds, counts, appWebhooks, activity] = await Promise.all([
      readQueueDepths(deps.queues),
      findOldestDueAgeSeconds(deps.db),
      readOperationalStates(deps.db),
      readAppWebhookGauges(deps.db),
      readHourlyActivity(deps.db),
    ]);
    send(res, overviewPage({ depths, oldestDueAgeSeconds, counts, appWebhooks, activity, delivery }));
  });

  router.get('/search', async (req, res) => {
    const q = typeof req.query.q === 'string' ? req.query.q.trim() : '';
    const matches = await findSupportMatches(deps.db, q);
    const [only] = matches;
    if (matches.length === 1 && only) {
      return res.redirect(
        303,
        only.kind === 'user'
          ? `${consoleBase}/users/${encodeURIComponent(only.userId)}`
          : `${consoleBase}/events/${only.inboxEventId}`,
      );
    }
    send(res, searchPage(q, matches), matches.length === 0 ? 404 : 200);
  });

  router.get('/users/:userId', async (req, res) => {
    const userId = userIdSchema.safeParse(req.params.userId);
    const cursor = optional(cursorSchema).safeParse(req.query.ledgerBefore);
    if (!userId.success || !cursor.success) return badRequest(res, send);
    const view = await findUserSupportView(deps.db, userId.data, {
      limits: { ledgerEntries: LEDGER_PAGE_SIZE + 1, ledgerBeforeId: cursor.data },
    });
    const more = view.ledger.entries.length > LEDGER_PAGE_SIZE;
    view.ledger.entries = view.ledger.entries.slice(0, LEDGER_PAGE_SIZE);
    const [series, messages] = await Promise.all([
      findBalanceSeries(deps.db, view.canonicalUserId),
      listAppWebhookMessages(deps.db, { userId: view.canonicalUserId, limit: USER_MESSAGES }),
    ]);
    send(
      res,
      userPage({
        view,
        delivery,
        series,
        messages: { items: messages.messages.map(toAppWebhookMessageView), more: messages.nextCursor !== null },
        ledgerCursor: cursor.data,
        ledgerNextCursor: more ? (view.ledger.entries[view.ledger.entries.length - 1]?.id ?? null) : null,
        notice: typeof req.query.notice === 'string' ? req.query.notice : undefined,
        grantReference: `console-${randomUUID()}`,
      }),
    );
  });

  // Grant and void, each one transaction with its audit row (runAdminGrant, runLotVoid).
  router.post('/users/:userId/grants', async (req, res) => {
    const userId = userIdSchema.safeParse(req.params.userId);
    if (!userId.success) return badRequest(res, send);
    const back = `${consoleBase}/users/${encodeURIComponent(userId.data)}`;
    const form = (req.body ?? {}) as Record<string, unknown>;
    const body = consoleGrantSchema.safeParse({
      amount:
        typeof form.amount === 'string' && /^[0-9]{1,10}$/.test(form.amount.trim()) ? Number(form.amount) : form.amount,
      reference: form.reference,
      expiresAt: typeof form.expiresAt === 'string' && form.expiresAt.trim() !== '' ? form.expiresAt.trim() : undefined,
      note: form.note,
    });
    if (!body.success) {
      res.locals[auditAnswerKey] = { error: { code: 'invalid_request', message: body.error.message } };
      return res.redirect(303, withNotice(back, 'invalid_grant'));
    }
    const result = await runAdminGrant(req, res, deps, { userId: userId.data, body: body.data }, (result) => ({
      statusCode: 303,
      body: grantAnswerOf(result).body,
    }));
    const notice = result.kind === 'conflict' ? 'reference_conflict' : result.kind.replace('-', '_');
    res.redirect(303, `${withNotice(back, notice)}#lots`);
  });
  router.post('/users/:userId/lots/:lotId/void', async (req, res) => {
    const userId = userIdSchema.safeParse(req.params.userId);
    const lotId = eventIdSchema.safeParse(req.params.lotId);
    if (!userId.success || !lotId.success) return badRequest(res, send);
    const result = await runLotVoid(req, res, deps, { userId: userId.data, lotId: lotId.data }, (result) => ({
      statusCode: 303,
      body: voidAnswerOf(result).body,
    }));
    const back = `${consoleBase}/users/${encodeURIComponent(userId.data)}`;
    const notice = result.kind === 'not-found' ? 'lot_not_found' : result.kind.replace('-', '_');
    res.redirect(303, `${withNotice(back, notice)}#lots`);
  });

  // Release of one hold, one transaction with its audit row (runHoldRelease), as the admin API's.
  router.post('/users/:userId/holds/:holdId/release', async (req, res) => {
    const userId = userIdSchema.safeParse(req.params.userId);
    const holdId = holdIdSchema.safeParse(req.params.holdId);
    if (!userId.success || !holdId.success) return badRequest(res, send);
    const result = await runHoldRelease(req, res, deps, { userId: userId.data, holdId: holdId.data }, (result) => ({
      statusCode: 303,
      body: endAnswerOf(result, holdId.data).body,
    }));
    const back = `${consoleBase}/users/${encodeURIComponent(userId.data)}`;
    const notice =
      result.kind === 'ended'
        ? 'hold_released'
        : result.kind === 'already'
          ? 'hold_already_released'
          : result.kind === 'not-found'
            ? 'hold_not_found'
            : 'hold_not_active';
    res.redirect(303, `${withNotice(back, notice)}#holds`);
  });

  router.get('/events', async (req, res) => {
    const query = inboxQuerySchema.safeParse(req.query);
    if (!query.success) return badRequest(res, send);
    const { cursor, notice, ...filter } = query.data;
    const result = await listInboxEvents(deps.db, {
      ...filter,
      outcomeCode: filter.outcome,
      limit: PAGE_SIZE,
      beforeId: cursor,
    });
    send(
      res,
      inboxPage({ filter, events: result.events.map(toInboxEventView), nextCursor: result.nextCursor, cursor, notice }),
    );
  });

  router.get('/events/:id', async (req, res) => {
    const id = eventIdSchema.safeParse(req.params.id);
    if (!id.success) return badRequest(res, send);
    const event = await findInboxEvent(deps.db, id.data);
    if (!event)
      return send(
        res,
        page({ title: 'No such event', section: 'inbox', body: html`<p>Inbox event ${id.data} does not exist.</p>` }),
        404,
      );
    const audit = await listAdminActions(deps.db, { limit: 50, target: { kind: 'inbox_event', id: String(event.id) } });
    const notice = typeof req.query.notice === 'string' ? req.query.notice : undefined;
    send(res, eventPage({ event: toInboxEventView(event), rawBody: event.raw_body, audit: audit.actions, notice }));
  });

  // Requeue, replay and redeliver are each one transaction with their audit row
  // (runAuditedRequest); the row or message goes to its queue after the commit.
  const eventAction =
    (act: (db: Kysely<DB>, id: number) => Promise<InboxActionResult>, done: 'requeued' | 'replayed') =>
    async (req: Request<{ id: string }>, res: Response) => {
      const id = eventIdSchema.safeParse(req.params.id);
      if (!id.success) return badRequest(res, send);
      const result = await runAuditedRequest(
        req,
        res,
        deps.db,
        (trx: Transaction<DB>) => act(trx, id.data),
        (result) => ({
          statusCode: 303,
          body:
            result.kind === 'refused'
              ? { error: { code: result.code, message: result.message } }
              : { [done]: result.ids.length, ids: result.ids },
        }),
      );
      const back = backTo(req.query.back, `${consoleBase}/events/${id.data}`);
      if (result.kind === 'refused') return res.redirect(303, withNotice(back, result.code));
      await deliver(deps, result.ids);
      res.redirect(303, withNotice(back, done));
    };
  router.post('/events/:id/requeue', eventAction(requeueOneEvent, 'requeued'));
  router.post('/events/:id/replay', eventAction(replayOneEvent, 'replayed'));

  router.get('/app-webhooks', async (req, res) => {
    const query = messagesQuerySchema.safeParse(req.query);
    if (!query.success) return badRequest(res, send);
    const { cursor, notice, ...filter } = query.data;
    const result = await listAppWebhookMessages(deps.db, { ...filter, limit: PAGE_SIZE, beforeId: cursor });
    send(
      res,
      messagesPage({
        delivery,
        filter,
        messages: result.messages.map(toAppWebhookMessageView),
        nextCursor: result.nextCursor,
        cursor,
        notice,
      }),
    );
  });

  router.get('/app-webhooks/:id', async (req, res) => {
    const uuid = parseWebhookId(req.params.id);
    if (uuid === undefined) return badRequest(res, send);
    const message = await findAppWebhookMessage(deps.db, uuid);
    if (!message) {
      return send(
        res,
        page({
          title: 'No such message',
          section: 'messages',
          body: html`<p>App-webhook message <code>${req.params.id}</code> does not exist (delivered messages are deleted after APP_WEBHOOK_RETENTION_DAYS).</p>`,
        }),
        404,
      );
    }
    const view = toAppWebhookMessageView(message);
    const audit = await listAdminActions(deps.db, { limit: 50, target: { kind: 'app_webhook_message', id: view.id } });
    send(
      res,
      messagePage({
        delivery,
        message: view,
        body: toAppWebhookBody(message),
        ledgerEntryId: message.ledger_entry_id,
        audit: audit.actions,
        notice: typeof req.query.notice === 'string' ? req.query.notice : undefined,
      }),
    );
  });

  router.post('/app-webhooks/:id/redeliver', async (req, res) => {
    const uuid = parseWebhookId(req.params.id);
    if (uuid === undefined) return badRequest(res, send);
    const result = await runAuditedRequest(
      req,
      res,
      deps.db,
      (trx) => redeliverOneMessage(trx, uuid, req.params.id),
      (result) => ({
        statusCode: 303,
        body:
          result.kind === 'refused'
            ? { error: { code: result.code, message: result.message } }
            : { redelivered: 1, message: toAppWebhookMessageView(result.message) },
      }),
    );
    const back = backTo(req.query.back, `${consoleBase}/app-webhooks/${req.params.id}`);
    if (result.kind === 'refused') return res.redirect(303, withNotice(back, `message_${result.code}`));
    await deliverMessage(deps, result.message);
    res.redirect(303, withNotice(back, 'redelivered'));
  });

  router.get('/audit', async (req, res) => {
    const cursor = optional(cursorSchema).safeParse(req.query.cursor);
    if (!cursor.success) return badRequest(res, send);
    const result = await listAdminActions(deps.db, { limit: PAGE_SIZE, beforeId: cursor.data });
    send(res, auditPage({ actions: result.actions, nextCursor: result.nextCursor, cursor: cursor.data }));
  });

  router.get('/reconcile', (_req, res) => {
    send(res, reconcilePage({ configured: deps.stripe !== undefined }));
  });

  router.post('/reconcile', async (req, res) => {
    const form = reconcileFormSchema.safeParse(req.body ?? {});
    if (!form.success) return badRequest(res, send);
    if (!deps.stripe) {
      res.locals[auditAnswerKey] = { error: { code: 'not_configured' } };
      return send(res, reconcilePage({ configured: false }), 503);
    }
    let report: StripeReconciliationReport;
    try {
      report = await reconcileStripe({ db: deps.db, stripe: deps.stripe, enqueue: deps.enqueue }, form.data);
    } catch (error) {
      if (!(error instanceof BillingError)) throw error;
      res.locals[auditAnswerKey] = { error: { code: error.code, message: error.message } };
      return send(res, reconcilePage({ configured: true, error: error.message }), 502);
    }
    res.locals[auditAnswerKey] = summarizeReconciliation(report);
    send(res, reconcilePage({ configured: true, report }));
  });

  return router;
}

/** Where an action sends the browser back to: a console page only (never another site). */
function backTo(value: unknown, fallback: string): string {
  if (typeof value !== 'string') return fallback;
  if (!value.startsWith(`${consoleBase}/`) && value !== consoleBase) return fallback;
  if (value.startsWith('//') || value.includes('\\') || /[\r\n]/.test(value)) return fallback;
  return value;
}

function withNotice(path: string, notice: string): string {
  const [pathname, search = ''] = path.split('?', 2);
  const params = new URLSearchParams(search);
  params.set('notice', notice);
  return `${pathname}${queryString(Object.fromEntries(params))}`;
}

function badRequest(res: Response, send: (res: Response, body: string, status?: number) => void) {
  send(
    res,
    page({
      title: 'Bad request',
      section: 'overview',
      body: html`<p>That address is not one the console knows how to read.</p>`,
    }),
    400,
  );
}
