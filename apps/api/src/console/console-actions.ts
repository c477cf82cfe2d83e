import {
  adminActions,
  BillingError,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  parseWebhookId,
  reconcileStripe,
  resolveUserId,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
  type StripeReconciliationReport,
  setSpendLimits,
  summarizeReconciliation,
  toAppWebhookMessageView,
} from '@tally/billing-core';
import type { Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod';
import { type AuditedTransaction, type AuditSpec, auditedHandler } from '../http/audit-admin-actions';
import { adminGrantBodySchema, grantAnswerOf } from '../http/grant-body';
import { eventIdSchema, userIdSchema } from '../http/params';
import { spendLimitsAnswerOf, spendLimitsBodySchema } from '../http/spend-limits-body';
import { deliverMessage, redeliverOneMessage } from '../routes/admin/app-webhook-actions';
import { runAutoTopupDisable } from '../routes/admin/auto-topup-actions';
import { runHoldRelease } from '../routes/admin/hold-actions';
import { deliver, type InboxActionResult, replayOneEvent, requeueOneEvent } from '../routes/admin/inbox-actions';
import { runAdminGrant, runLotVoid, voidAnswerOf } from '../routes/admin/lot-actions';
import { endAnswerOf, holdIdSchema } from '../routes/v1/hold-answers';
import type { ConsoleDeps } from './console-deps';
import { queryString } from './html';
import { consoleBase } from './layout';
import { reconcilePage } from './pages/other-pages';

/**
 * What a console action answers, returned to the audit that sends it: a redirect back to a page
 * (303) or a page, and what the audit row records as the answer (`audit`; an `error.code` in it
 * is the outcome).
 */
export type ConsoleAnswer = ({ redirect: string } | { status: number; html: string }) & { audit?: unknown };

/** Sends a console answer: the redirect, or the page uncached. */
export function sendConsoleAnswer(res: Response, answer: ConsoleAnswer): void {
  if ('redirect' in answer) res.redirect(303, answer.redirect);
  else res.status(answer.status).type('html').set('Cache-Control', 'no-store').send(answer.html);
}

/** The console's grant form: the admin grant's body, the note required. */
const consoleGrantSchema = adminGrantBodySchema.extend({ note: z.string().trim().min(1).max(1000) });
/** The console's auto top-up disable form: the admin route's note, required. */
const consoleDisableSchema = z.object({ note: z.string().trim().min(1).max(1000) });
const reconcileFormSchema = z.object({
  windowDays: z.coerce.number().positive().max(STRIPE_EVENTS_MAX_WINDOW_DAYS).default(DEFAULT_RECONCILE_WINDOW_DAYS),
  dryRun: z.preprocess((value) => value === 'true' || value === 'on', z.boolean()),
});

/**
 * The console's actions, each a same-origin POST form (requireAdminKeyOrBasic) audited as its
 * `audit` says: grant, void, hold release, spend limits, auto top-up off, requeue, replay and redeliver are each one
 * transaction with their audit row (the row or message goes to its queue after the commit);
 * reconcile spans calls to Stripe, so its row is written before it runs.
 */
export function addConsoleActions(router: Router, deps: ConsoleDeps, badRequest: () => ConsoleAnswer): void {
  // guard: audit-console
  const action = (
    audit: AuditSpec,
    handle: (req: Request, audited: AuditedTransaction) => Promise<ConsoleAnswer>,
  ): RequestHandler =>
    auditedHandler(
      {
        db: deps.db,
        surface: 'console',
        spec: audit,
        recordOf: (answer) => ({ statusCode: 'redirect' in answer ? 303 : answer.status, body: answer.audit }),
        send: sendConsoleAnswer,
      },
      (req, _res, audited) => handle(req, audited),
    );
  const userPage = (userId: string) => `${consoleBase}/users/${encodeURIComponent(userId)}`;
  /** A POST about one user: its path parameters parsed by their schemas (one that does not parse: a 400). */
  const userAction = <Shape extends Record<string, z.ZodType>>(
    path: string,
    audit: AuditSpec,
    shape: Shape,
    handle: (params: z.output<z.ZodObject<Shape>>, req: Request, audited: AuditedTransaction) => Promise<ConsoleAnswer>,
  ) =>
    router.post(
      path,
      action(audit, async (req, audited) => {
        const params = z.object(shape).safeParse(req.params);
        return params.success ? handle(params.data, req, audited) : badRequest();
      }),
    );
  /** What a user action's audit row records: the 303 it answers, with the API's answer to the same result. */
  const seeOther =
    <Result>(answerOf: (result: Result) => { body: unknown }) =>
    (result: Result) => ({ statusCode: 303, body: answerOf(result).body });

  userAction(
    '/users/:userId/grants',
    { action: adminActions.userGrant, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    { userId: userIdSchema },
    async (params, req, audited) => {
      const back = userPage(params.userId);
      const form = (req.body ?? {}) as Record<string, unknown>;
      const body = consoleGrantSchema.safeParse({
        amount:
          typeof form.amount === 'string' && /^[0-9]{1,10}$/.test(form.amount.trim())
            ? Number(form.amount)
            : form.amount,
        reference: form.reference,
        expiresAt:
          typeof form.expiresAt === 'string' && form.expiresAt.trim() !== '' ? form.expiresAt.trim() : undefined,
        note: form.note,
      });
      if (!body.success) {
        return {
          redirect: withNotice(back, 'invalid_grant'),
          audit: { error: { code: 'invalid_request', message: body.error.message } },
        };
      }
      const request = { userId: params.userId, body: body.data };
      const result = await runAdminGrant(audited, deps, request, seeOther(grantAnswerOf));
      const notice = result.kind === 'conflict' ? 'reference_conflict' : result.kind.replace('-', '_');
      return { redirect: `${withNotice(back, notice)}#lots` };
    },
  );

  userAction(
    '/users/:userId/lots/:lotId/void',
    { action: adminActions.lotVoid, target: { kind: 'credit_lot', param: 'lotId' }, inTransaction: true },
    { userId: userIdSchema, lotId: eventIdSchema },
    async (params, _req, audited) => {
      const result = await runLotVoid(audited, deps, params, seeOther(voidAnswerOf));
      const notice = result.kind === 'not-found' ? 'lot_not_found' : result.kind.replace('-', '_');
      return { redirect: `${withNotice(userPage(params.userId), notice)}#lots` };
    },
  );

  // Release of one hold, as the admin API's.
  userAction(
    '/users/:userId/holds/:holdId/release',
    // guard: audit-console-release-route
    { action: adminActions.holdRelease, target: { kind: 'hold', param: 'holdId' }, inTransaction: true },
    { userId: userIdSchema, holdId: holdIdSchema },
    async (params, _req, audited) => {
      const answerOf = (result: Parameters<typeof endAnswerOf>[0]) => endAnswerOf(result, params.holdId);
      const result = await runHoldRelease(audited, deps, params, seeOther(answerOf));
      const notice =
        result.kind === 'ended'
          ? 'hold_released'
          : result.kind === 'already'
            ? 'hold_already_released'
            : result.kind === 'not-found'
              ? 'hold_not_found'
              : 'hold_not_active';
      return { redirect: `${withNotice(userPage(params.userId), notice)}#holds` };
    },
  );

  // The user's own spend limits, as the admin API's PUT: an empty field removes one (the default applies).
  userAction(
    '/users/:userId/limits',
    // guard: audit-console-limits-route
    { action: adminActions.spendLimitsSet, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    { userId: userIdSchema },
    async ({ userId }, req, audited) => {
      const back = userPage(userId);
      const form = (req.body ?? {}) as Record<string, unknown>;
      const field = (value: unknown) =>
        typeof value === 'string' && value.trim() === ''
          ? null
          : typeof value === 'string' && /^[0-9]{1,15}$/.test(value.trim())
            ? Number(value)
            : value;
      const body = spendLimitsBodySchema.safeParse({ daily: field(form.daily), monthly: field(form.monthly) });
      if (!body.success) {
        return {
          redirect: `${withNotice(back, 'invalid_limits')}#limits`,
          audit: { error: { code: 'invalid_request', message: body.error.message } },
        };
      }
      await audited(
        async (trx) => setSpendLimits(trx, await resolveUserId(trx, userId), body.data, deps.spendLimits),
        (view) => ({ statusCode: 303, body: spendLimitsAnswerOf(view, userId).body }),
      );
      return { redirect: `${withNotice(back, 'limits_set')}#limits` };
    },
  );

  // Auto top-up off, as the admin API's disable: the app is told (wallet.auto_topup_disabled, reason operator).
  userAction(
    '/users/:userId/auto-topup/disable',
    // guard: audit-console-auto-topup-route
    { action: adminActions.autoTopupDisable, target: { kind: 'user', param: 'userId' }, inTransaction: true },
    { userId: userIdSchema },
    async ({ userId }, req, audited) => {
      const back = userPage(userId);
      const body = consoleDisableSchema.safeParse(req.body ?? {});
      if (!body.success) {
        return {
          redirect: `${withNotice(back, 'invalid_auto_topup_disable')}#auto-topup`,
          audit: { error: { code: 'invalid_request', message: body.error.message } },
        };
      }
      const disabled = await runAutoTopupDisable(audited, deps, userId, (disabled) => ({
        statusCode: 303,
        body: { userId, disabled },
      }));
      return {
        redirect: `${withNotice(back, disabled ? 'auto_topup_disabled' : 'auto_topup_already_off')}#auto-topup`,
      };
    },
  );

  const eventAction = (audit: AuditSpec, act: typeof requeueOneEvent, done: 'requeued' | 'replayed'): RequestHandler =>
    action(audit, async (req, audited) => {
      const id = eventIdSchema.safeParse(req.params.id);
      if (!id.success) return badRequest();
      const result: InboxActionResult = await audited(
        (trx) => act(trx, id.data),
        (result) => ({
          statusCode: 303,
          body:
            result.kind === 'refused'
              ? { error: { code: result.code, message: result.message } }
              : { [done]: result.ids.length, ids: result.ids },
        }),
      );
      const back = backTo(req.query.back, `${consoleBase}/events/${id.data}`);
      if (result.kind === 'refused') return { redirect: withNotice(back, result.code) };
      await deliver(deps, result.ids);
      return { redirect: withNotice(back, done) };
    });
  const target = { kind: 'inbox_event', param: 'id' };
  router.post(
    '/events/:id/requeue',
    eventAction({ action: adminActions.inboxRequeue, target, inTransaction: true }, requeueOneEvent, 'requeued'),
  );
  router.post(
    '/events/:id/replay',
    eventAction({ action: adminActions.inboxReplay, target, inTransaction: true }, replayOneEvent, 'replayed'),
  );

  router.post(
    '/app-webhooks/:id/redeliver',
    action(
      {
        action: adminActions.appWebhookRedeliver,
        target: { kind: 'app_webhook_message', param: 'id' },
        inTransaction: true,
      },
      async (req, audited) => {
        const id = String(req.params.id);
        const uuid = parseWebhookId(id);
        if (uuid === undefined) return badRequest();
        const result = await audited(
          (trx) => redeliverOneMessage(trx, uuid, id),
          (result) => ({
            statusCode: 303,
            body:
              result.kind === 'refused'
                ? { error: { code: result.code, message: result.message } }
                : { redelivered: 1, message: toAppWebhookMessageView(result.message) },
          }),
        );
        const back = backTo(req.query.back, `${consoleBase}/app-webhooks/${id}`);
        if (result.kind === 'refused') return { redirect: withNotice(back, `message_${result.code}`) };
        await deliverMessage(deps, result.message);
        return { redirect: withNotice(back, 'redelivered') };
      },
    ),
  );

  router.post(
    '/reconcile',
    action({ action: adminActions.reconcileStripe }, async (req) => {
      const form = reconcileFormSchema.safeParse(req.body ?? {});
      if (!form.success) return badRequest();
      if (!deps.stripe) {
        return {
          status: 503,
          html: reconcilePage({ configured: false }),
          audit: { error: { code: 'not_configured' } },
        };
      }
      let report: StripeReconciliationReport;
      try {
        report = await reconcileStripe({ db: deps.db, stripe: deps.stripe, enqueue: deps.enqueue }, form.data);
      } catch (error) {
        if (!(error instanceof BillingError)) throw error;
        return {
          status: 502,
          html: reconcilePage({ configured: true, error: error.message }),
          audit: { error: { code: error.code, message: error.message } },
        };
      }
      return { status: 200, html: reconcilePage({ configured: true, report }), audit: summarizeReconciliation(report) };
    }),
  );
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
