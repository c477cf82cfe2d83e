import type {
  AppWebhookMessageView,
  BalancePoint,
  SpendLimitsView,
  UsageDay,
  UserSupportView,
} from '@tally/billing-core';
import type { AppWebhookDelivery } from '../../app-webhook-delivery';
import { lineChart } from '../charts';
import { html } from '../html';
import {
  consoleBase,
  eventHeaders,
  eventLink,
  eventRows,
  messageHeaders,
  messageRows,
  notices,
  page,
  statusText,
  table,
  time,
} from '../layout';
import { type AutoTopupSectionData, autoTopupSection } from './user-auto-topup-section';
import { limitsSection } from './user-limits-section';

export interface UserPageData {
  view: UserSupportView;
  /** Whether app-webhook messages are delivered (APP_WEBHOOK_URL). */
  delivery: AppWebhookDelivery;
  series: BalancePoint[];
  /** `reportUsage` of the last 30 UTC days: summed per feature and variant on the page. */
  usage: UsageDay[];
  /** readSpendLimits: the limits in force, what was spent, when each resets. */
  limits: SpendLimitsView;
  autoTopup: AutoTopupSectionData;
  /** The id of the last ledger entry shown when more follow (the next page's cursor). */
  ledgerNextCursor: number | null;
  ledgerCursor: number | undefined;
  /** The user's newest app-webhook messages, and whether older ones exist. */
  messages: { items: AppWebhookMessageView[]; more: boolean };
  notice?: string | undefined;
  /** The reference of the page's grant form (generated per render: a double submit grants once). */
  grantReference: string;
}

/** One user on one page: balance and its plot, ledger (paged), subscription, events, money, studio. */
export function userPage(data: UserPageData): string {
  const { view } = data;
  const userPath = `${consoleBase}/users/${encodeURIComponent(view.canonicalUserId)}`;
  const sub = view.subscription;
  const attention = view.events.items.filter((event) => event.attention !== 'none').length;
  return page({
    title: `User ${view.canonicalUserId}`,
    section: 'user',
    notice: data.notice ? notices[data.notice] : undefined,
    // guard: console-grant-reference
    body: html`
${view.userId !== view.canonicalUserId ? html`<p class="muted">Searched as <code>${view.userId}</code>, linked to this user.</p>` : ''}
<div class="cards">
  <div class="card"><div class="value" id="balance">${view.wallet.balance}</div><div class="label">balance (tokens)</div></div>
  <div class="card"><div class="value" id="held">${view.wallet.held}</div><div class="label">held by ${view.holds.activeTotal} active holds</div></div>
  <div class="card"><div class="value" id="available">${view.wallet.available}</div><div class="label">available (balance − held)</div></div>
  <div class="card"><div class="value ${view.wallet.debt > 0 ? 'bad' : ''}" id="debt">${view.wallet.debt}</div><div class="label"><a href="#debt-sources">debt</a> (owed: settled by the next paid credit)</div></div>
  <div class="card"><div class="value">${view.ledger.total}</div><div class="label">ledger entries</div></div>
  <div class="card"><div class="value ${view.ledger.matchesBalance ? 'good' : 'bad'}">${view.ledger.matchesBalance ? 'yes' : 'NO'}</div><div class="label">balance = sum of entries (${view.ledger.sum})</div></div>
  <div class="card"><div class="value ${attention > 0 ? 'bad' : ''}">${attention}</div><div class="label">events needing attention</div></div>
</div>
<h2 id="lots">Lots (in the order a debit draws them)</h2>
${table(
  ['Lot', 'Category', 'Source', 'Amount', 'Remaining', 'Held', 'Expires', ''],
  view.wallet.lots.map((lot) => [
    lot.id,
    lot.category,
    html`<span class="mono">${lot.source}</span>`,
    lot.amount,
    lot.remaining,
    lot.held,
    lot.expiresAt ? time(lot.expiresAt) : 'never',
    html`<form class="inline" method="post" action="${userPath}/lots/${lot.id}/void"><button type="submit" aria-label="Void lot ${lot.id}">Void</button></form>`,
  ]),
  'lots with tokens left',
)}
${
  view.wallet.debts.length === 0
    ? ''
    : html`<h2 id="debt-sources">Debt: what made it, what settled it</h2>
${table(
  ['Source', 'Of', 'Take-back', 'Owed', 'Settled', 'Forgiven', 'Open', 'Since', 'Closed'],
  view.wallet.debts.map((debt) => [
    debt.source,
    html`<span class="mono">${debt.sourceId}</span>`,
    html`<span class="mono">${debt.takeBackReference}</span>`,
    debt.owed,
    debt.settled,
    debt.forgiven,
    debt.closedAt ? 0 : debt.owed - debt.settled - debt.forgiven,
    time(debt.createdAt),
    debt.closedAt ? time(debt.closedAt) : '–',
  ]),
  'sources of debt',
)}`
}
<form class="filters" method="post" action="${userPath}/grants" aria-label="Grant tokens">
  <input type="hidden" name="reference" value="${data.grantReference}">
  <label for="g-amount">Tokens<input id="g-amount" name="amount" inputmode="numeric" required></label>
  <label for="g-expires">Expires at (ISO, optional)<input id="g-expires" name="expiresAt" placeholder="2027-01-31T00:00:00Z"></label>
  <label for="g-note">Note<input id="g-note" name="note" required></label>
  <button type="submit" class="primary">Grant tokens</button>
</form>
<h2 id="holds">Holds (active first, then the newest ended)</h2>
<p class="muted">${view.holds.items.length} shown, ${view.holds.activeTotal} active. Releasing a hold makes its tokens available again (no ledger row; audited).</p>
${table(
  ['Hold', 'Status', 'Amount', 'Captured', 'Released', 'Expires', 'Reference', 'Reason', 'Lots reserved', ''],
  view.holds.items.map((hold) => [
    html`<span class="mono">${hold.id}</span>`,
    statusText(hold.status),
    hold.amount,
    hold.captured ?? '–',
    hold.released ?? '–',
    time(hold.expiresAt),
    html`<span class="mono">${hold.reference}</span>`,
    hold.reason,
    hold.lots.map((lot) => `${lot.lotId}: ${lot.amount}`).join(', ') || '–',
    // guard: console-release-button
    hold.status === 'held'
      ? html`<form class="inline" method="post" action="${userPath}/holds/${hold.id}/release"><button type="submit" aria-label="Release hold ${hold.id}">Release</button></form>`
      : '',
  ]),
  'holds',
)}
${limitsSection(data.limits, userPath)}
${autoTopupSection(data.autoTopup, userPath)}
<h2>Balance over time</h2>
${lineChart(
  data.series.map((point) => ({ at: point.at, value: point.balance, min: point.min, max: point.max })),
  { label: `balance of ${view.canonicalUserId} over time` },
)}

<h2 id="events">Events (needing attention first)</h2>
<p class="muted">${view.events.items.length} of ${view.events.total} shown. <a href="${consoleBase}/events?userId=${encodeURIComponent(view.canonicalUserId)}">All events filed under this user id in the inbox</a></p>
${table(eventHeaders, eventRows(view.events.items, userPath), 'events of the user')}

<h2 id="ledger">Ledger</h2>
${table(
  ['#', 'Reference', 'Amount', 'Before', 'After', 'Reason', 'Event', 'When'],
  view.ledger.entries.map((entry) => [
    entry.id,
    html`<span class="mono">${entry.reference}</span>`,
    entry.amount > 0 ? `+${entry.amount}` : entry.amount,
    entry.balanceBefore,
    entry.balanceAfter,
    entry.reason,
    eventLink(entry.inboxEventId),
    time(entry.createdAt),
  ]),
  'ledger entries',
)}
<nav class="pager" aria-label="Ledger pages">
  ${data.ledgerCursor !== undefined ? html`<a href="${userPath}#ledger">Newest entries</a>` : ''}
  ${data.ledgerNextCursor !== null ? html`<a href="${userPath}?ledgerBefore=${data.ledgerNextCursor}#ledger" rel="next">Older entries</a>` : ''}
</nav>

<h2 id="messages">App-webhook messages (newest first)</h2>
<p class="muted">${data.messages.more ? `The newest ${data.messages.items.length} shown. ` : ''}<a href="${consoleBase}/app-webhooks?userId=${encodeURIComponent(view.canonicalUserId)}">All messages of this user</a></p>
${table(messageHeaders, messageRows(data.messages.items, userPath, data.delivery), 'app-webhook messages of the user')}

<h2>Subscription</h2>
${
  sub === null
    ? html`<p class="muted">No subscription from either source.</p>`
    : html`<dl class="facts">
  <dt>Current</dt><dd>${sub.current ? html`${statusText(sub.current.status)} · plan ${sub.current.planId ?? '–'} · ${sub.current.source} · expires ${time(sub.current.expiresAt)} · auto-renew ${sub.current.autoRenew ? 'on' : 'off'}` : '–'}</dd>
  <dt>RevenueCat</dt><dd>${sub.revenuecat ? html`${sub.revenuecat.status} · ${sub.revenuecat.productId ?? '–'} · store ${sub.revenuecat.store ?? '–'} · billing issue ${time(sub.revenuecat.billingIssueDetectedAt)}` : '–'}</dd>
  <dt>Stripe</dt><dd>${sub.stripe.length === 0 ? '–' : sub.stripe.map((row) => html`<span class="mono">${row.subscriptionId}</span> ${row.status} · plan ${row.planId ?? '–'} · period end ${time(row.currentPeriodEnd)}${row.cancelAtPeriodEnd ? ' · cancels at period end' : ''}<br>`)}</dd>
</dl>
<h3>History (${sub.historyTotal})</h3>
${table(
  ['When', 'Source', 'Change', 'Status', 'Plan', 'Expires', 'Cause', 'Event'],
  sub.history.map((row) => [
    time(row.createdAt),
    row.source,
    row.change,
    `${row.fromStatus ?? '–'} → ${row.toStatus}`,
    `${row.fromPlanId ?? '–'} → ${row.toPlanId ?? '–'}`,
    time(row.toExpiresAt),
    row.cause,
    eventLink(row.inboxEventId),
  ]),
  'subscription history',
)}`
}

<h2>Payments</h2>
${table(
  [
    'Payment',
    'Kind',
    'Product',
    'Amount',
    'Status',
    'Tokens granted',
    'Tokens refunded',
    'Shortfall',
    'Ledger reference',
    'Email',
    'Event',
    'When',
  ],
  view.payments.map((payment) => [
    html`<span class="mono">${payment.providerPaymentId}</span>`,
    payment.kind,
    payment.productId,
    `${(payment.amountMinor / 100).toFixed(2)} ${payment.currency.toUpperCase()}`,
    payment.status,
    payment.tokensGranted,
    payment.tokensRefunded,
    payment.refundShortfall > 0 ? html`<span class="bad">${payment.refundShortfall}</span>` : 0,
    html`<span class="mono">${payment.ledgerReference}</span>`,
    payment.email ? `${payment.email.status}${payment.email.lastError ? `: ${payment.email.lastError}` : ''}` : '–',
    eventLink(payment.inboxEventId),
    time(payment.createdAt),
  ]),
  'payments',
)}
<h2>Refunds</h2>
${table(
  ['Refund', 'Provider', 'Pack', 'Credited', 'Tokens taken', 'Shortfall', 'Credit reference', 'Event', 'When'],
  view.refunds.map((refund) => [
    html`<span class="mono">${refund.providerRefundId}</span>`,
    refund.provider,
    refund.packId,
    refund.tokensCredited,
    refund.tokensTaken,
    refund.shortfall > 0 ? html`<span class="bad">${refund.shortfall}</span>` : 0,
    html`<span class="mono">${refund.creditReference}</span>`,
    eventLink(refund.inboxEventId),
    time(refund.createdAt),
  ]),
  'refunds',
)}
<h2>Disputes</h2>
${table(
  ['Dispute', 'Payment', 'Status', 'Tokens owed', 'Tokens taken', 'Shortfall', 'Reinstated', 'Withdrawn', 'Reference'],
  view.disputes.map((dispute) => [
    html`<span class="mono">${dispute.disputeId}</span>`,
    html`<span class="mono">${dispute.providerPaymentId}</span>`,
    dispute.status,
    dispute.tokensOwed,
    dispute.tokensTaken,
    dispute.shortfall > 0 ? html`<span class="bad">${dispute.shortfall}</span>` : 0,
    dispute.reinstatedAt ? html`${dispute.tokensReinstated} (${time(dispute.reinstatedAt)})` : '–',
    time(dispute.withdrawnAt),
    html`<span class="mono">${dispute.ledgerReference}</span>`,
  ]),
  'disputes',
)}
<h2>Top-ups</h2>
${table(
  ['Reference', 'Pack', 'Tokens', 'Amount', 'Payment intent', 'Status', 'Paid', 'Created'],
  view.topups.map((topup) => [
    html`<span class="mono">${topup.reference}</span>`,
    topup.packId,
    topup.tokens,
    `${(topup.amountMinor / 100).toFixed(2)} ${topup.currency.toUpperCase()}`,
    topup.paymentIntentId ?? '–',
    topup.status,
    time(topup.paidAt),
    time(topup.createdAt),
  ]),
  'top-ups',
)}
<h2>Installments</h2>
${table(
  ['Invoice', 'Sequence', 'Tokens', 'Due', 'Status', 'Attempts', 'Error', 'Reference'],
  view.installments.map((row) => [
    html`<span class="mono">${row.invoiceId}</span>`,
    row.sequence,
    row.tokens,
    time(row.dueAt),
    row.status,
    row.attempts,
    row.lastError ?? '',
    html`<span class="mono">${row.ledgerReference}</span>`,
  ]),
  'installments',
)}
<h2>Usage per feature (last 30 days)</h2>
${table(
  ['Feature', 'Variant', 'Uses', 'Free uses', 'Quantities', 'Tokens'],
  usagePerFeature(data.usage).map((row) => [
    row.feature,
    row.variant ?? '',
    row.uses,
    row.freeUses,
    html`<span class="mono">${Object.entries(row.quantities)
      .map(([meter, n]) => `${meter} ${n}`)
      .join(', ')}</span>`,
    row.tokens,
  ]),
  'priced uses',
)}
<h2>Studio requests (${view.studioRequests.total})</h2>
${table(
  ['Request', 'Kind', 'Status', 'Tokens charged', 'Free tier', 'Attempts', 'Error', 'Refunded', 'Created'],
  view.studioRequests.items.map((request) => [
    html`<span class="mono">${request.id}</span>`,
    request.kind,
    statusText(request.status),
    request.tokensCharged,
    request.freeTier ? 'yes' : 'no',
    request.attempts,
    request.error ? `${request.error.code ?? ''} ${request.error.message ?? ''}` : '',
    time(request.refundedAt),
    time(request.createdAt),
  ]),
  'studio requests',
)}
<h2>Linked ids</h2>
${table(
  ['Provider', 'Kind', 'Id', 'First seen', 'Last seen'],
  view.linkedIds.map((linked) => [
    linked.provider,
    linked.kind,
    html`<span class="mono">${linked.id}</span>`,
    time(linked.firstSeenAt),
    time(linked.lastSeenAt),
  ]),
  'linked ids',
)}`,
  });
}

/** The report's days summed per feature and variant (the page shows the 30 days as one row each). */
function usagePerFeature(days: readonly UsageDay[]): Omit<UsageDay, 'date' | 'users'>[] {
  const rows = new Map<string, Omit<UsageDay, 'date' | 'users'>>();
  for (const day of days) {
    const key = `${day.feature}\u0000${day.variant ?? ''}`;
    const row = rows.get(key) ?? {
      feature: day.feature,
      variant: day.variant,
      uses: 0,
      freeUses: 0,
      quantities: {},
      tokens: 0,
    };
    row.uses += day.uses;
    row.freeUses += day.freeUses;
    row.tokens += day.tokens;
    for (const [meter, n] of Object.entries(day.quantities)) row.quantities[meter] = (row.quantities[meter] ?? 0) + n;
    rows.set(key, row);
  }
  return [...rows.values()].sort(
    (a, b) => a.feature.localeCompare(b.feature) || (a.variant ?? '').localeCompare(b.variant ?? ''),
  );
}
