/** The value at quantile q of an ascending array (nearest rank). */
export function percentile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function median(values) {
  const finite = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = Math.floor(finite.length / 2);
  return finite.length % 2 === 1 ? finite[middle] : (finite[middle - 1] + finite[middle]) / 2;
}

export function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN;
}

export function round(value, digits = 0) {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A plain-text table: rows of [label, value, unit/ratio note]. */
export function formatTable(rows) {
  const width = [0, 0];
  for (const row of rows) for (let i = 0; i < 2; i += 1) width[i] = Math.max(width[i], String(row[i] ?? '').length);
  return rows
    .map((row) =>
      row.length === 1
        ? `\n${row[0]}`
        : `  ${String(row[0]).padEnd(width[0])}  ${String(row[1]).padStart(width[1])}  ${row[2] ?? ''}`,
    )
    .join('\n');
}
