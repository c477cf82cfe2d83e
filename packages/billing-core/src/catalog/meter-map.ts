/**
 * A feature use's jsonb `{meter: number}` (quantities, prices) as read back: an object of whole
 * numbers, or an error naming what is off (the database only ever stores what pricing wrote).
 */
export function meterMap(value: unknown): Record<string, number> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`a feature use's meters are an object, got ${JSON.stringify(value)}`);
  }
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [meter, n] of entries) {
    if (!Number.isSafeInteger(n)) throw new TypeError(`meter ${meter} holds ${JSON.stringify(n)}, not a whole number`);
  }
  return Object.fromEntries(entries) as Record<string, number>;
}

/** The same meters with the same quantities, whatever their order. */
export function sameMeters(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((meter) => a[meter] === b[meter]);
}
