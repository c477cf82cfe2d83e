import {
  type AdminActionView,
  type InboxEventRow,
  type InboxEventView,
  inboxStatuses,
  providers,
} from '@tally/billing-core';
import { html, option, queryString } from '../html';
import {
  consoleBase,
  eventActions,
  eventHeaders,
  eventRows,
  notices,
  page,
  pager,
  prettyJson,
  statusText,
  table,
  time,
  userLink,
} from '../layout';

export interface InboxFilter {
  provider?: string | undefined;
  type?: string | undefined;
  status?: string | undefined;
  outcome?: string | undefined;
  userId?: string | undefined;
}

/** The inbox: filters, newest first, paged by id, with requeue and replay buttons. */
export function inboxPage(data: {
  filter: InboxFilter;
  events: InboxEventView[];
  nextCursor: number | null;
  cursor: number | undefined;
  notice?: string | undefined;
}): string {
  const { filter } = data;
  const here = `${consoleBase}/events${queryString({ ...filter, cursor: data.cursor })}`;
  return page({
    title: 'Inbox',
    section: 'inbox',
    notice: data.notice ? notices[data.notice] : undefined,
    body: html`
<form class="filters" method="get" action="${consoleBase}/events">
  <label for="f-provider">Provider<select id="f-provider" name="provider">${option('', filter.provider, 'any')}${providers.map((provider) => option(provider, filter.provider))}</select></label>
  <label for="f-type">Type<input id="f-type" name="type" value="${filter.type ?? ''}" placeholder="invoice.paid"></label>
  <label for="f-status">Status<select id="f-status" name="status">${option('', filter.status, 'any')}${inboxStatuses.map((status) => option(status, filter.status))}</select></label>
  <label for="f-outcome">Outcome<input id="f-outcome" name="outcome" value="${filter.outcome ?? ''}" placeholder="invalid_event"></label>
  <label for="f-user">User<input id="f-user" name="userId" value="${filter.userId ?? ''}"></label>
  <button type="submit">Filter</button>
  <a href="${consoleBase}/events">Clear</a>
</form>
${table(eventHeaders, eventRows(data.events, here), 'inbox events')}
${pager('Inbox pages', {
  first: `${consoleBase}/events${queryString({ ...filter })}`,
  paged: data.cursor !== undefined,
  next: data.nextCursor === null ? null : `${consoleBase}/events${queryString({ ...filter, cursor: data.nextCursor })}`,
})}`,
  });
}

/** One event: every field, its raw body, the audit of actions on it, and its buttons. */
export function eventPage(data: {
  event: InboxEventView;
  rawBody: InboxEventRow['raw_body'];
  audit: AdminActionView[];
  notice?: string | undefined;
}): string {
  const { event } = data;
  const here = `${consoleBase}/events/${event.id}`;
  return page({
    title: `Event #${event.id}: ${event.type}`,
    section: 'inbox',
    notice: data.notice ? notices[data.notice] : undefined,
    body: html`
<p>${eventActions(event, here)}</p>
<dl class="facts">
  <dt>Provider</dt><dd>${event.provider} · <span class="mono">${event.providerEventId}</span></dd>
  <dt>Status</dt><dd>${statusText(event.status)} · attempts ${event.attempts} · replays ${event.replays} · deferrals ${event.deferrals}</dd>
  <dt>Outcome</dt><dd>${event.outcome ? html`<code>${event.outcome.code}</code> ${event.outcome.detail ?? ''}` : '–'}</dd>
  <dt>Last error</dt><dd>${event.lastError ? html`<span class="bad">${event.lastError}</span>` : '–'}</dd>
  <dt>User</dt><dd>${userLink(event.userId)}</dd>
  <dt>Provider ids</dt><dd class="mono">${[event.providerCustomerId, event.providerSubscriptionId, event.providerPaymentIntentId, event.providerInvoiceId].filter(Boolean).join(' · ') || '–'}</dd>
  <dt>Environment</dt><dd>${event.environment ?? '–'}${event.livemode === null ? '' : ` · livemode ${event.livemode}`}</dd>
  <dt>Source</dt><dd>${event.source}</dd>
  <dt>Received</dt><dd>${time(event.receivedAt)}</dd>
  <dt>Next attempt</dt><dd>${time(event.nextAttemptAt)}</dd>
  <dt>Processed</dt><dd>${time(event.processedAt)}</dd>
</dl>
<h2>Raw body</h2>
${data.rawBody === null ? html`<p class="muted">Pruned by retention at ${time(event.rawBodyPrunedAt)}.</p>` : html`<pre>${prettyJson(data.rawBody)}</pre>`}
<h2>Operators' actions on this event</h2>
${auditTable(data.audit)}`,
  });
}

export function auditTable(actions: readonly AdminActionView[]) {
  return table(
    ['#', 'When', 'Action', 'Surface', 'Target', 'Key', 'Actor', 'Status', 'Outcome', 'Answer'],
    actions.map((action) => [
      action.id,
      time(action.createdAt),
      html`<code>${action.action}</code>`,
      action.surface,
      action.target
        ? action.target.kind === 'inbox_event'
          ? html`<a href="${consoleBase}/events/${action.target.id}">${action.target.kind} ${action.target.id}</a>`
          : action.target.kind === 'app_webhook_message'
            ? html`<a href="${consoleBase}/app-webhooks/${encodeURIComponent(action.target.id)}">${action.target.kind} ${action.target.id}</a>`
            : `${action.target.kind} ${action.target.id}`
        : action.request
          ? html`<code class="wrap">${JSON.stringify(action.request).slice(0, 160)}</code>`
          : '–',
      action.keyFingerprint ? html`<code>${action.keyFingerprint}</code>` : '–',
      action.actor ?? '–',
      action.statusCode ?? '–',
      action.outcome === 'ok' ? html`<span class="good">ok</span>` : html`<span class="bad">${action.outcome}</span>`,
      action.answer === null ? '–' : html`<code class="wrap">${JSON.stringify(action.answer).slice(0, 200)}</code>`,
    ]),
    'audit rows',
  );
}
