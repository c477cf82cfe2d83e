import type { SpendLimitsView, SpendPeriodView } from '@tally/billing-core';
import { type Html, html } from '../html';
import { table, time } from '../layout';

/** The own limit of a period as the form shows it: empty when the default (or none) applies. */
const ownValue = (period: SpendPeriodView) => (period.source === 'user' ? String(period.limit) : '');

/**
 * The user page's spend limits (docs/spend-limits.md): each period's limit in force and where it
 * comes from, what was spent, when it resets, and the form that sets the user's own (audited; an
 * empty field removes the user's own limit, so the default applies).
 */
export function limitsSection(limits: SpendLimitsView, userPath: string): Html {
  const row = (name: string, period: SpendPeriodView) => [
    name,
    period.limit ?? 'none',
    period.source,
    period.spent,
    time(period.resetsAt),
  ];
  return html`<h2 id="limits">Spend limits</h2>
<p class="muted">Tokens spent per UTC day and calendar month by debits, usage, captures and studio; what active holds reserve (${limits.held} now) counts until they end. A spend past a limit is refused (402 spend_limit_reached).</p>
${table(['Period', 'Limit', 'Source', 'Spent', 'Resets at'], [row('day', limits.daily), row('month', limits.monthly)], 'spend limits')}
<form class="filters" method="post" action="${userPath}/limits" aria-label="Set spend limits">
  <label for="l-daily">Daily limit (empty: the default)<input id="l-daily" name="daily" inputmode="numeric" value="${ownValue(limits.daily)}"></label>
  <label for="l-monthly">Monthly limit (empty: the default)<input id="l-monthly" name="monthly" inputmode="numeric" value="${ownValue(limits.monthly)}"></label>
  <button type="submit" class="primary">Save limits</button>
</form>`;
}
