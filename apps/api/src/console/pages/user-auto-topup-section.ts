import type { AutoTopupAttemptView, AutoTopupView } from '@tally/billing-core';
import { type Html, html } from '../html';
import { statusText, table, time } from '../layout';

/** What the user page shows of auto top-up: readAutoTopup and the newest attempts (listAutoTopupAttempts). */
export interface AutoTopupSectionData {
  view: AutoTopupView;
  attempts: AutoTopupAttemptView[];
}

/** Whether it is on, and when it is off whether Tally turned it off and why. */
function state(view: AutoTopupView): Html | string {
  if (view.enabled) return html`<span class="good">enabled</span>`;
  if (view.disabledReason === null) return view.packId === null ? 'not set' : 'disabled by the app';
  return html`<span class="bad">disabled</span> (reason ${view.disabledReason})`;
}

/**
 * The user page's auto top-up (issue 59): the settings the app set, the saved card Tally charges
 * off session, this month's count against the limit, the newest attempts with why each failed,
 * and the button that turns it off (audited as `auto_topup.disable`; the app is told with
 * `wallet.auto_topup_disabled`, reason operator, and turns it back on by enabling it again). The
 * button is there only while it is on: turning off what is off does nothing.
 */
export function autoTopupSection({ view, attempts }: AutoTopupSectionData, userPath: string): Html {
  const card = view.paymentMethod;
  return html`<h2 id="auto-topup">Auto top-up</h2>
<p class="muted">When a spend leaves the available balance below the threshold, the worker charges the saved card for the pack off session (at most the monthly limit of charges per calendar month, UTC). Three failures in a row turn it off.</p>
<dl class="facts">
  <dt>State</dt><dd id="auto-topup-state">${state(view)}</dd>
  <dt>Pack</dt><dd>${view.packId ?? '–'}</dd>
  <dt>Threshold</dt><dd>${view.threshold ?? '–'}</dd>
  <dt>This month</dt><dd>${view.thisMonth} of ${view.monthlyLimit ?? '–'} (in flight or succeeded)</dd>
  <dt>Failures in a row</dt><dd class="${view.failuresInARow > 0 ? 'bad' : ''}">${view.failuresInARow}</dd>
  <dt>Saved card</dt><dd>${card ? html`<span class="mono">${card.id}</span> of customer <span class="mono">${card.customerId}</span>, saved ${time(card.savedAt)}` : 'none (nothing is charged without one)'}</dd>
</dl>
${table(
  [
    'Attempt',
    'Status',
    'Available after / threshold',
    'Payment intent',
    'Failure code',
    'Requires action',
    'Tries',
    'Created',
    'Finished',
  ],
  attempts.map((attempt) => [
    html`<span class="mono">${attempt.id}</span>`,
    statusText(attempt.status),
    `${attempt.availableAfter} / ${attempt.threshold}`,
    attempt.paymentIntentId ? html`<span class="mono">${attempt.paymentIntentId}</span>` : '–',
    attempt.failureCode ?? '',
    attempt.requiresAction ? html`<span class="bad">yes</span>` : 'no',
    attempt.tries,
    time(attempt.createdAt),
    time(attempt.finishedAt),
  ]),
  'auto top-up attempts',
)}
${
  // guard: console-auto-topup-button
  view.enabled
    ? html`<form class="filters" method="post" action="${userPath}/auto-topup/disable" aria-label="Disable auto top-up">
  <label for="at-note">Note (why; kept in the audit row)<input id="at-note" name="note" required maxlength="1000"></label>
  <button type="submit">Disable auto top-up</button>
</form>`
    : ''
}`;
}
