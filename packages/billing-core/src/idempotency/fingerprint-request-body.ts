import { createHash } from 'node:crypto';

/**
 * JSON text with object keys sorted at every level, so two bodies that are the same JSON value
 * (keys in another order, other whitespace) have one text. Array order is kept: it is meaning.
 */
export function toCanonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(toCanonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${toCanonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The fingerprint of a request body kept with its idempotency key: sha256 (hex) of its canonical
 * JSON. No body and a JSON `null` body are one fingerprint.
 */
export function fingerprintRequestBody(body: unknown): string {
  // guard: idempotency-body-fingerprint
  return createHash('sha256').update(toCanonicalJson(body)).digest('hex');
}
