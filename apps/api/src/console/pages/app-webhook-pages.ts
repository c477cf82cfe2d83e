import { type AdminActionView, type AppWebhookMessageView, appWebhookMessageTypes } from '@tally/billing-core';
import type { AppWebhookDelivery } from '../../app-webhook-delivery';
import { html, option, queryString } from '../html';
import {
  consoleBase,
  messageActions,
  messageHeaders,
  messageRows,
  messageStatusText,
  notConfiguredBanner,
  notices,
  page,
  pager,
  prettyJson,
  table,
  time,
  userLink,
} from '../layout';
import { auditTable } from './inbox-pages';

export interface MessageFilter {
  status?: string | undefined;
  type?: string | undefined;
  userId?: string | undefined;
}

export const messageStatuses = ['pending', 'delivered', 'failed'] as const;

/** App-webhook messages newest first, filtered by status, type and user, with Redeliver buttons. */
export function messagesPage(data: {
  delivery: AppWebhookDelivery;
  filter: MessageFilter;
  messages: AppWebhookMessageView[];
  nextCursor: number | null;
  cursor: number | undefined;
  notice?: string | undefined;
}): string {
  const { filter } = data;
  const here = `${consoleBase}/app-webhooks${queryString({ ...filter, cursor: data.cursor })}`;
  return page({
    title: 'App-webhook messages',
    section: 'messages',
    notice: data.notice ? notices[data.notice] : undefined,
    body: html`
${notConfiguredBanner(data.delivery)}
<p class="muted">What Tally told the app (<code>APP_WEBHOOK_URL</code>), newest first. A failed message is kept with its attempts until it is redelivered; a delivered one may be redelivered too (same webhook-id: the app dedupes). JSON: <code>GET /admin/app-webhooks/messages</code>.</p>
<form class="filters" method="get" action="${consoleBase}/app-webhooks">
  <label for="m-status">Status<select id="m-status" name="status">${option('', filter.status, 'any')}${messageStatuses.map((status) => option(status, filter.status))}</select></label>
  <label for="m-type">Type<select id="m-type" name="type">${option('', filter.type, 'any')}${appWebhookMessageTypes.map((type) => option(type, filter.type))}</select></label>
  <label for="m-user">User<input id="m-user" name="userId" value="${filter.userId ?? ''}"></label>
  <button type="submit">Filter</button>
  <a href="${consoleBase}/app-webhooks">Clear</a>
</form>
${table(messageHeaders, messageRows(data.messages, here, data.delivery), 'app-webhook messages')}
${pager('Message pages', {
  first: `${consoleBase}/app-webhooks${queryString({ ...filter })}`,
  paged: data.cursor !== undefined,
  next:
    data.nextCursor === null
      ? null
      : `${consoleBase}/app-webhooks${queryString({ ...filter, cursor: data.nextCursor })}`,
})}`,
  });
}

/** One message: its delivery state and attempts, the body exactly as sent, and the audit of actions on it. */
export function messagePage(data: {
  delivery: AppWebhookDelivery;
  message: AppWebhookMessageView;
  body: string;
  ledgerEntryId: number | null;
  audit: AdminActionView[];
  notice?: string | undefined;
}): string {
  const { message } = data;
  const here = `${consoleBase}/app-webhooks/${message.id}`;
  return page({
    title: `Message ${message.id}: ${message.type}`,
    section: 'messages',
    notice: data.notice ? notices[data.notice] : undefined,
    body: html`
${message.status === 'pending' ? notConfiguredBanner(data.delivery) : ''}
<p>${messageActions(message, here)}</p>
<dl class="facts">
  <dt>Status</dt><dd>${messageStatusText(message, data.delivery)}</dd>
  <dt>Attempts</dt><dd>${message.attempts} in its current schedule (a redeliver starts a new one)</dd>
  <dt>Last attempt</dt><dd>${message.lastStatusCode === null ? (message.attempts === 0 ? 'not sent yet' : 'no HTTP answer') : html`HTTP <code>${message.lastStatusCode}</code>`}</dd>
  <dt>Last error</dt><dd>${message.lastError ? html`<span class="bad">${message.lastError}</span>` : '–'}</dd>
  <dt>Next attempt</dt><dd>${time(message.nextAttemptAt)}</dd>
  <dt>Delivered</dt><dd>${time(message.deliveredAt)}</dd>
  <dt>User</dt><dd>${userLink(message.userId)}</dd>
  <dt>Created</dt><dd>${time(message.createdAt)} (the change it announces)</dd>
  <dt>Ledger entry</dt><dd>${data.ledgerEntryId === null ? '–' : `#${data.ledgerEntryId}`}</dd>
</dl>
<h2>Body (as sent, signed with every secret)</h2>
<pre>${prettyJson(data.body)}</pre>
<h2>Operators' actions on this message</h2>
${auditTable(data.audit)}`,
  });
}
