import { type Html, html } from './html';

/**
 * A line chart of numbers over time as inline SVG (no script, no chart library): the line through
 * `value`, a band between `min` and `max`, the first and last dates and the highest value marked.
 */
export function lineChart(
  points: readonly { at: Date; value: number; min: number; max: number }[],
  options: { label: string; width?: number; height?: number },
): Html {
  const width = options.width ?? 720;
  const height = options.height ?? 160;
  const pad = { left: 48, right: 8, top: 10, bottom: 22 };
  if (points.length === 0) return html`<p class="muted">No ledger entries yet.</p>`;
  const top = Math.max(1, ...points.map((point) => point.max));
  const x = (index: number) =>
    pad.left + (points.length === 1 ? 0 : (index / (points.length - 1)) * (width - pad.left - pad.right));
  const y = (value: number) => pad.top + (1 - value / top) * (height - pad.top - pad.bottom);
  const line = points.map((point, index) => `${x(index).toFixed(1)},${y(point.value).toFixed(1)}`).join(' ');
  const band = [
    ...points.map((point, index) => `${x(index).toFixed(1)},${y(point.max).toFixed(1)}`),
    ...points.map((point, index) => `${x(index).toFixed(1)},${y(point.min).toFixed(1)}`).reverse(),
  ].join(' ');
  const first = points[0];
  const last = points[points.length - 1];
  return html`<svg class="chart" role="img" aria-label="${options.label}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
  <title>${options.label}</title>
  <line class="axis" x1="${pad.left}" y1="${y(0)}" x2="${width - pad.right}" y2="${y(0)}"/>
  <line class="grid" x1="${pad.left}" y1="${y(top)}" x2="${width - pad.right}" y2="${y(top)}"/>
  <text class="tick" x="${pad.left - 4}" y="${y(top) + 4}" text-anchor="end">${top}</text>
  <text class="tick" x="${pad.left - 4}" y="${y(0) + 4}" text-anchor="end">0</text>
  <polygon class="band" points="${band}"/>
  <polyline class="line" points="${line}"/>
  ${last ? html`<circle class="dot" cx="${x(points.length - 1).toFixed(1)}" cy="${y(last.value).toFixed(1)}" r="3.5"/>` : ''}
  <text class="tick" x="${pad.left}" y="${height - 4}">${first ? shortDate(first.at) : ''}</text>
  <text class="tick" x="${width - pad.right}" y="${height - 4}" text-anchor="end">${last ? shortDate(last.at) : ''}</text>
</svg>`;
}

/** Horizontal bars with their numbers, for counts by state (queue depths, parked events by type). */
export function barChart(bars: readonly { label: string; value: number }[], options: { label: string }): Html {
  if (bars.length === 0) return html`<p class="muted">None.</p>`;
  const width = 360;
  const row = 20;
  const labelWidth = 150;
  const top = Math.max(1, ...bars.map((bar) => bar.value));
  const height = bars.length * row + 4;
  return html`<svg class="chart" role="img" aria-label="${options.label}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
  <title>${options.label}</title>
  ${bars.map((bar, index) => {
    const barWidth = bar.value === 0 ? 0 : Math.max(2, (bar.value / top) * (width - labelWidth - 50));
    const y = index * row + 2;
    // A label longer than its 150 px is cut with an ellipsis (its full text in a tooltip), never clipped at the edge.
    const label = bar.label.length > 19 ? `${bar.label.slice(0, 18)}…` : bar.label;
    return html`<text class="tick" x="${labelWidth - 6}" y="${y + 13}" text-anchor="end"><title>${bar.label}</title>${label}</text>
  <rect class="bar" x="${labelWidth}" y="${y + 2}" width="${barWidth.toFixed(1)}" height="${row - 6}"/>
  <text class="tick" x="${labelWidth + barWidth + 4}" y="${y + 13}">${bar.value}</text>`;
  })}
</svg>`;
}

export function shortDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * A small column chart of counts per hour (the overview's last 24 hours), or per UTC day (`per:
 * 'day'`, the overview's tokens per feature): one column per hour or day, oldest on the left, the peak marked, each column titled with its hour and count (a tooltip, and
 * what a screen reader reads with the label). `tone: 'bad'` draws it in the error colour.
 */
export function hourlyChart(
  points: readonly { hour: Date; value: number }[],
  options: { label: string; tone?: 'bad'; per?: 'hour' | 'day' },
): Html {
  const per = options.per ?? 'hour';
  const when = per === 'hour' ? hourText : (date: Date) => shortDate(date);
  const width = 250;
  const height = 84;
  const pad = { left: 30, right: 4, top: 8, bottom: 18 };
  const total = points.reduce((sum, point) => sum + point.value, 0);
  const peak = Math.max(0, ...points.map((point) => point.value));
  const top = Math.max(1, peak);
  const slot = (width - pad.left - pad.right) / Math.max(1, points.length);
  const plotHeight = height - pad.top - pad.bottom;
  const first = points[0];
  const label =
    per === 'hour'
      ? `${options.label}: ${total} in the last ${points.length} h, at most ${peak} in an hour`
      : `${options.label}: ${total} in the last ${points.length} days, at most ${peak} in a day`;
  return html`<figure class="spark">
<svg class="chart" role="img" aria-label="${label}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
  <title>${label}</title>
  <line class="axis" x1="${pad.left}" y1="${pad.top + plotHeight}" x2="${width - pad.right}" y2="${pad.top + plotHeight}"/>
  <text class="tick" x="${pad.left - 4}" y="${pad.top + 8}" text-anchor="end">${peak}</text>
  <text class="tick" x="${pad.left - 4}" y="${pad.top + plotHeight}" text-anchor="end">0</text>
  ${points.map((point, index) => {
    const barHeight = point.value === 0 ? 0 : Math.max(1.5, (point.value / top) * plotHeight);
    return html`<rect class="bar${options.tone === 'bad' ? ' bad' : ''}" x="${(pad.left + index * slot + 1).toFixed(1)}" y="${(pad.top + plotHeight - barHeight).toFixed(1)}" width="${Math.max(1, slot - 2).toFixed(1)}" height="${barHeight.toFixed(1)}"><title>${when(point.hour)}: ${point.value}</title></rect>`;
  })}
  <text class="tick" x="${pad.left}" y="${height - 4}">${first ? when(first.hour) : ''}</text>
  <text class="tick" x="${width - pad.right}" y="${height - 4}" text-anchor="end">${per === 'hour' ? 'now' : 'today'}</text>
</svg>
<figcaption><strong>${total}</strong> ${options.label}</figcaption>
</figure>`;
}

/** "14:00Z" of an hour (UTC, as every time in the console). */
function hourText(date: Date): string {
  return `${date.toISOString().slice(11, 16)}Z`;
}
