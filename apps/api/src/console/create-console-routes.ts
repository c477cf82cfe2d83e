import { randomUUID } from 'node:crypto';
import {
  appWebhookMessageTypes,
  findAppWebhookMessage,
  findBalanceSeries,
  findInboxEvent,
  findOldestDueAgeSeconds,
  findSupportMatches,
  findUserSupportView,
  inboxStatuses,
  listAdminActions,
  listAppWebhookMessages,
  listAutoTopupAttempts,
  listInboxEvents,
  parseWebhookId,
  providers,
  readAppWebhookGauges,
  readAutoTopup,
  readHourlyActivity,
  readOperationalStates,
  readSpendLimits,
  reportUsage,
  toAppWebhookBody,
  toAppWebhookMessageView,
  toInboxEventView,
} from '@tally/billing-core';
import { readQueueDepths } from '@tally/platform';
import express, { type Response, Router } from 'express';
import helmet from 'helmet';
import { z } from 'zod';
import { cursorSchema, eventIdSchema, userIdSchema } from '../http/params';
import { addConsoleActions, type ConsoleAnswer, sendConsoleAnswer } from './console-actions';
import { consoleCss } from './console-css';
import type { ConsoleDeps } from './console-deps';
import { html } from './html';
import { consoleBase, page } from './layout';
import { messagePage, messageStatuses, messagesPage } from './pages/app-webhook-pages';
import { eventPage, inboxPage } from './pages/inbox-pages';
import { auditPage, reconcilePage, searchPage } from './pages/other-pages';
import { overviewPage } from './pages/overview-page';
import { userPage } from './pages/user-page';

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
      // guard: console-frame-ancestors
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
 * redeliver, grant, void, release and reconcile as POST forms, each audited (console-actions.ts).
 * Mount it behind `consoleHeaders` and `requireAdminKeyOrBasic` (Basic auth, same-origin POSTs).
 */
export function createConsoleRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  const delivery = deps.appWebhookDelivery ?? 'on';
  router.use(express.urlencoded({ extended: false, limit: '10kb' }));
  const send = (res: Response, html: string, status = 200) => sendConsoleAnswer(res, { status, html });

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
    const dates = Array.from({ length: 14 }, (_, i) =>
      new Date(Date.now() - (13 - i) * 86_400_000).toISOString().slice(0, 10),
    );
    const usageDays = await reportUsage(deps.db, { userId: null, from: dates[0] as string, to: dates[13] as string });
    send(
      res,
      overviewPage({
        depths,
        oldestDueAgeSeconds,
        counts,
        appWebhooks,
        activity,
        delivery,
        usage: { days: usageDays, dates },
      }),
    );
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
    if (!userId.success || !cursor.success) return sendConsoleAnswer(res, badRequestAnswer());
    const view = await findUserSupportView(deps.db, userId.data, {
      limits: { ledgerEntries: LEDGER_PAGE_SIZE + 1, ledgerBeforeId: cursor.data },
    });
    const more = view.ledger.entries.length > LEDGER_PAGE_SIZE;
    view.ledger.entries = view.ledger.entries.slice(0, LEDGER_PAGE_SIZE);
    const usageTo = new Date().toISOString().slice(0, 10);
    const usageFrom = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    const [series, messages, usage, limits, autoTopup, autoTopupAttempts] = await Promise.all([
      findBalanceSeries(deps.db, view.canonicalUserId),
      listAppWebhookMessages(deps.db, { userId: view.canonicalUserId, limit: USER_MESSAGES }),
      reportUsage(deps.db, { userId: view.canonicalUserId, from: usageFrom, to: usageTo }),
      readSpendLimits(deps.db, view.canonicalUserId, deps.spendLimits),
      readAutoTopup(deps.db, view.canonicalUserId),
      listAutoTopupAttempts(deps.db, view.canonicalUserId),
    ]);
    send(
      res,
      userPage({
        view,
        delivery,
        series,
        usage,
        limits,
        autoTopup: { view: autoTopup, attempts: autoTopupAttempts },
        messages: { items: messages.messages.map(toAppWebhookMessageView), more: messages.nextCursor !== null },
        ledgerCursor: cursor.data,
        ledgerNextCursor: more ? (view.ledger.entries[view.ledger.entries.length - 1]?.id ?? null) : null,
        notice: typeof req.query.notice === 'string' ? req.query.notice : undefined,
        grantReference: `console-${randomUUID()}`,
      }),
    );
  });

  router.get('/events', async (req, res) => {
    const query = inboxQuerySchema.safeParse(req.query);
    if (!query.success) return sendConsoleAnswer(res, badRequestAnswer());
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
    if (!id.success) return sendConsoleAnswer(res, badRequestAnswer());
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

  router.get('/app-webhooks', async (req, res) => {
    const query = messagesQuerySchema.safeParse(req.query);
    if (!query.success) return sendConsoleAnswer(res, badRequestAnswer());
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
    if (uuid === undefined) return sendConsoleAnswer(res, badRequestAnswer());
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

  router.get('/audit', async (req, res) => {
    const cursor = optional(cursorSchema).safeParse(req.query.cursor);
    if (!cursor.success) return sendConsoleAnswer(res, badRequestAnswer());
    const result = await listAdminActions(deps.db, { limit: PAGE_SIZE, beforeId: cursor.data });
    send(res, auditPage({ actions: result.actions, nextCursor: result.nextCursor, cursor: cursor.data }));
  });

  router.get('/reconcile', (_req, res) => {
    send(res, reconcilePage({ configured: deps.stripe !== undefined }));
  });

  addConsoleActions(router, deps, badRequestAnswer);

  return router;
}

/** The 400 page of an address the console cannot read. */
function badRequestAnswer(): ConsoleAnswer {
  return {
    status: 400,
    html: page({
      title: 'Bad request',
      section: 'overview',
      body: html`<p>That address is not one the console knows how to read.</p>`,
    }),
  };
}
