import type { AdminActionView, StripeReconciliationReport, SupportMatch } from '@tally/billing-core';
import { html } from '../html';
import { consoleBase, eventLink, page, pager, table, userLink } from '../layout';
import { auditTable } from './inbox-pages';

/** Operators' actions from every surface, newest first, paged by id. */
export function auditPage(data: { actions: AdminActionView[]; nextCursor: number | null; cursor: number | undefined }) {
  return page({
    title: 'Audit of operators’ actions',
    section: 'audit',
    body: html`
<p class="muted">Every state-changing admin action (admin API, console, queue dashboard, CLI), append-only. JSON: <code>GET /admin/audit</code>.</p>
${auditTable(data.actions)}
${pager('Audit pages', {
  first: `${consoleBase}/audit`,
  paged: data.cursor !== undefined,
  next: data.nextCursor === null ? null : `${consoleBase}/audit?cursor=${data.nextCursor}`,
})}`,
  });
}

/** What a search found when it was not exactly one thing. */
export function searchPage(query: string, matches: readonly SupportMatch[]) {
  return page({
    title: `Search: ${query}`,
    section: 'search',
    search: query,
    body:
      matches.length === 0
        ? html`<p>Nothing matches <code>${query}</code>: not a user id or linked id, a provider event id, an inbox event number, a Stripe customer, subscription, payment or invoice id, a top-up or a ledger reference.</p>`
        : table(
            ['Found', 'Via', 'Details'],
            matches.map((match) =>
              match.kind === 'user'
                ? [userLink(match.userId), match.via, 'user']
                : [
                    eventLink(match.inboxEventId),
                    match.via,
                    html`${match.provider} <span class="mono">${match.providerEventId}</span> ${match.type}`,
                  ],
            ),
            'search results',
          ),
  });
}

/** Reconciliation against Stripe: the form, and the findings of the run just made. */
export function reconcilePage(data: {
  configured: boolean;
  report?: StripeReconciliationReport | undefined;
  error?: string | undefined;
}) {
  const { report } = data;
  return page({
    title: 'Reconciliation with Stripe',
    section: 'reconcile',
    notice: data.error ? { text: data.error, error: true } : undefined,
    body: html`
${
  data.configured
    ? html`<form class="filters" method="post" action="${consoleBase}/reconcile">
  <label for="r-days">Window (days, at most 30)<input id="r-days" name="windowDays" type="number" min="1" max="30" value="3"></label>
  <label for="r-dry"><span>Dry run (report only)</span><input id="r-dry" name="dryRun" type="checkbox" value="true" checked></label>
  <button type="submit" class="primary">Reconcile now</button>
</form>`
    : html`<p class="muted">The Stripe API is not configured (STRIPE_SECRET_KEY): reconciliation cannot run from this api.</p>`
}
${
  report
    ? html`<h2>Findings</h2>
<p>${report.stripeEvents} Stripe events over ${report.windowDays} day(s) since ${report.windowStart}${report.dryRun ? ' (dry run)' : ''}${report.truncated ? ' (listing truncated)' : ''}: <strong class="${report.ok ? 'good' : 'bad'}">${report.ok ? 'nothing found' : 'discrepancies found'}</strong></p>
<h3>Missing events (${report.missingEvents.length})</h3>
${table(
  ['Event id', 'Type', 'Created', 'Result', 'Inbox'],
  report.missingEvents.map((event) => [
    event.eventId,
    event.type,
    event.createdAt ?? '–',
    event.result,
    eventLink(event.inboxEventId),
  ]),
)}
<h3>Events processed without their rows (${report.eventsWithoutRows.length})</h3>
${table(
  ['Inbox', 'Event id', 'Type', 'Outcome', 'Missing'],
  report.eventsWithoutRows.map((event) => [
    eventLink(event.inboxEventId),
    event.eventId,
    event.type,
    event.outcomeCode ?? '–',
    event.missing.join('; '),
  ]),
)}
<h3>Ledger rows without an event (${report.ledgerRowsWithoutEvent.length})</h3>
${table(
  ['Ledger id', 'Reference', 'User', 'Amount', 'Created'],
  report.ledgerRowsWithoutEvent.map((row) => [
    row.ledgerEntryId,
    row.reference,
    userLink(row.userId),
    row.amount,
    row.createdAt,
  ]),
)}`
    : ''
}
<p class="muted">Every run is audited (see Audit); the worker's reconcile role runs the same check on a schedule.</p>`,
  });
}
