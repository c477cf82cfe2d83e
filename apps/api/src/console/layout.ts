import type { AppWebhookMessageView, InboxEventView } from '@tally/billing-core';
import { type AppWebhookDelivery, notConfiguredNote } from '../app-webhook-delivery';
import { type Html, type HtmlValue, html, queryString } from './html';

export const consoleBase = '/admin/console';
export const dashboardLink = '/admin/queues';

export type ConsoleSection = 'overview' | 'inbox' | 'messages' | 'audit' | 'reconcile' | 'search' | 'user';

/** The page shell: navigation, the search box on every page, the notice of the last action. */
export function page(options: {
  title: string;
  section: ConsoleSection;
  body: HtmlValue;
  notice?: { text: string; error?: boolean } | undefined;
  search?: string | undefined;
}): string {
  const nav = (section: ConsoleSection, href: string, label: string) =>
    html`<a href="${href}"${section === options.section ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Tally console</title>
<link rel="stylesheet" href="${consoleBase}/console.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <span class="brand">Tally console</span>
  <nav aria-label="Console">
    ${nav('overview', consoleBase, 'Overview')}
    ${nav('inbox', `${consoleBase}/events`, 'Inbox')}
    ${nav('messages', `${consoleBase}/app-webhooks`, 'App webhooks')}
    ${nav('audit', `${consoleBase}/audit`, 'Audit')}
    ${nav('reconcile', `${consoleBase}/reconcile`, 'Reconciliation')}
    <a href="${dashboardLink}">Queues (Bull Board)</a>
  </nav>
  <form method="get" action="${consoleBase}/search" role="search">
    <label for="q">Search</label>
    <input id="q" name="q" size="34" value="${options.search ?? ''}" placeholder="user id, event id, pi_…, in_…, sub_…, cus_…" required>
    <button type="submit">Find</button>
  </form>
</header>
<main id="main">
${options.notice ? html`<p class="notice${options.notice.error ? ' error' : ''}" role="status">${options.notice.text}</p>` : ''}
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>`.text;
}

export function time(date: Date | string | null | undefined): Html | string {
  if (!date) return '–';
  if (typeof date === 'string') return time(new Date(date));
  return html`<time datetime="${date.toISOString()}">${date.toISOString().replace('T', ' ').slice(0, 19)}Z</time>`;
}

export function userLink(userId: string | null | undefined): Html | string {
  if (!userId) return '–';
  return html`<a href="${consoleBase}/users/${encodeURIComponent(userId)}">${userId}</a>`;
}

export function eventLink(id: number | null | undefined, label?: string): Html | string {
  if (id === null || id === undefined) return '–';
  return html`<a href="${consoleBase}/events/${id}">${label ?? `#${id}`}</a>`;
}

export function statusText(status: string): Html {
  return html`<span class="status-${status}">${status}</span>`;
}

/** A plain table: headers, then rows of cells; a caption for screen readers when given. */
export function table(headers: readonly string[], rows: readonly HtmlValue[][], caption?: string): Html {
  if (rows.length === 0) return html`<p class="muted">None.</p>`;
  const numeric = (header: string) => /^(amount|balance|before|after|attempts|tokens|count|#|shortfall)/i.test(header);
  return html`<table>
${caption ? html`<caption class="skip">${caption}</caption>` : ''}
<thead><tr>${headers.map((header) => html`<th scope="col"${numeric(header) ? html` class="num"` : ''}>${header}</th>`)}</tr></thead>
<tbody>
${rows.map((cells) => html`<tr>${cells.map((cell, index) => html`<td${numeric(headers[index] ?? '') ? html` class="num"` : ''}>${cell}</td>`)}</tr>\n`)}
</tbody>
</table>`;
}

/** The buttons that act on an event: requeue when parked, replay when finished (POST forms). */
export function eventActions(event: Pick<InboxEventView, 'id' | 'status' | 'rawBodyPrunedAt'>, back: string): Html {
  const form = (action: 'requeue' | 'replay', label: string) =>
    html`<form class="inline" method="post" action="${consoleBase}/events/${event.id}/${action}${queryString({ back })}"><button type="submit" class="primary">${label}</button></form>`;
  if (event.status === 'failed') return form('requeue', `Requeue #${event.id}`);
  if ((event.status === 'processed' || event.status === 'ignored') && !event.rawBodyPrunedAt) {
    return form('replay', `Replay #${event.id}`);
  }
  return html``;
}

/** The rows of an event list, the same columns on the inbox and the user page. */
export function eventRows(events: readonly (InboxEventView & { attention?: string })[], back: string): HtmlValue[][] {
  return events.map((event) => [
    eventLink(event.id),
    event.provider,
    html`<span class="mono">${event.providerEventId}</span>`,
    event.type,
    userLink(event.userId),
    statusText(event.status),
    event.attention && event.attention !== 'none' ? html`<span class="warn">${event.attention}</span>` : '',
    event.attempts,
    event.outcome ? event.outcome.code : '–',
    event.lastError ?? event.outcome?.detail ?? '',
    time(event.receivedAt),
    eventActions(event, back),
  ]);
}

export const eventHeaders = [
  '#',
  'Provider',
  'Event id',
  'Type',
  'User',
  'Status',
  'Attention',
  'Attempts',
  'Outcome',
  'Error / detail',
  'Received',
  'Action',
];

/** The notices an action redirects with: fixed texts chosen by code, never text from the request. */
export const notices: Record<string, { text: string; error?: boolean }> = {
  requeued: { text: 'Requeued: the event is back in the queue and will be processed.' },
  replayed: { text: 'Replayed: the event runs again through the current handler (effects are keyed by reference).' },
  not_parked: { text: 'Not requeued: only parked (failed) events are requeued.', error: true },
  not_finished: {
    text: 'Not replayed: only processed or ignored events with their raw body are replayed.',
    error: true,
  },
  not_found: { text: 'That event does not exist.', error: true },
  redelivered: { text: 'Redelivered: the message is pending again and goes out under the same webhook-id.' },
  message_not_finished: {
    text: 'Not redelivered: the message is still pending; only delivered or failed messages are redelivered.',
    error: true,
  },
  message_not_found: { text: 'That message does not exist.', error: true },
  granted: { text: 'Granted: a promotional lot was created (audited).' },
  already_granted: { text: 'Already granted: this form was submitted before; nothing more was granted.' },
  reference_conflict: { text: 'Not granted: the reference already granted another amount or expiry.', error: true },
  invalid_grant: {
    text: 'Not granted: tokens must be a positive whole number, the expiry a future ISO time, and a note is required.',
    error: true,
  },
  voided: { text: 'Voided: what was left of the lot was taken back (audited).' },
  already_voided: { text: 'Already voided: nothing more was taken.' },
  lot_not_found: { text: "That lot is not one of this user's.", error: true },
  hold_released: { text: 'Released: the hold ended and its tokens are available again (audited).' },
  hold_already_released: { text: 'Already released: nothing more was freed.' },
  hold_not_active: { text: 'Not released: the hold was captured or has expired.', error: true },
  hold_not_found: { text: "That hold is not one of this user's.", error: true },
  limits_set: { text: 'Spend limits saved (audited).' },
  invalid_limits: {
    text: 'Not saved: each limit is a whole number of tokens, 0 or more, or empty for the default.',
    error: true,
  },
  auto_topup_disabled: { text: 'Auto top-up disabled (audited); the app was told and can enable it again.' },
  auto_topup_already_off: { text: 'Auto top-up was already off: nothing changed.' },
  invalid_auto_topup_disable: { text: 'Not disabled: a note saying why is required.', error: true },
};

export function messageLink(id: string): Html {
  return html`<a class="mono" href="${consoleBase}/app-webhooks/${id}">${id}</a>`;
}

/** The Redeliver button of a delivered or failed message (a POST form); nothing while it is pending. */
export function messageActions(message: Pick<AppWebhookMessageView, 'id' | 'status'>, back: string): Html {
  if (message.status === 'pending') return html``;
  return html`<form class="inline" method="post" action="${consoleBase}/app-webhooks/${message.id}/redeliver${queryString({ back })}"><button type="submit" class="${message.status === 'failed' ? 'primary' : ''}" aria-label="Redeliver ${message.id}">Redeliver</button></form>`;
}

export const messageHeaders = [
  'Message (webhook-id)',
  'Type',
  'User',
  'Status',
  'Attempts',
  'Last status',
  'Last error',
  'Created',
  'Delivered / next attempt',
  'Action',
];

/**
 * A message's status as the console shows it: a pending message while delivery is not configured
 * (no APP_WEBHOOK_URL) waits for the URL, not for a retry, and says so.
 */
export function messageStatusText(
  message: Pick<AppWebhookMessageView, 'status'>,
  delivery: AppWebhookDelivery = 'on',
): Html {
  if (message.status === 'pending' && delivery === 'not_configured') {
    return html`<span class="status-not-configured" title="${notConfiguredNote}">not configured</span>`;
  }
  return statusText(message.status);
}

/** The banner of a page listing messages while delivery is not configured. */
export function notConfiguredBanner(delivery: AppWebhookDelivery = 'on'): Html {
  if (delivery === 'on') return html``;
  return html`<p class="notice error" id="delivery-not-configured"><strong>Not configured:</strong> <code>APP_WEBHOOK_URL</code> is not set, so messages are written but not delivered; pending ones wait, in order, until it is set on the api and the workers (the retention role deletes them after <code>APP_WEBHOOK_RETENTION_DAYS</code>).</p>`;
}

/** The rows of a message list, the same columns on the messages page and the user page. */
export function messageRows(
  messages: readonly AppWebhookMessageView[],
  back: string,
  delivery: AppWebhookDelivery = 'on',
): HtmlValue[][] {
  return messages.map((message) => [
    messageLink(message.id),
    message.type,
    userLink(message.userId),
    messageStatusText(message, delivery),
    message.attempts,
    message.lastStatusCode ?? '–',
    message.lastError ? html`<span class="bad">${clip(message.lastError, 120)}</span>` : '',
    time(message.createdAt),
    message.deliveredAt
      ? time(message.deliveredAt)
      : message.status === 'pending' && delivery === 'not_configured'
        ? 'waits for APP_WEBHOOK_URL'
        : message.nextAttemptAt
          ? html`next ${time(message.nextAttemptAt)}`
          : '–',
    messageActions(message, back),
  ]);
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/** JSON pretty-printed for a <pre> (the tag escapes it); text that is not JSON as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Keyset paging links: "Newest" back to the first page once paged, "Older" (rel=next) to the rows
 * below the last one shown. `first` is the first page's address, `next` the next page's, or null.
 */
export function pager(label: string, links: { first: string; paged: boolean; next: string | null }): Html {
  return html`<nav class="pager" aria-label="${label}">
  ${links.paged ? html`<a href="${links.first}">Newest</a>` : ''}
  ${links.next !== null ? html`<a rel="next" href="${links.next}">Older</a>` : ''}
</nav>`;
}
