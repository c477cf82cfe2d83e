import { randomUUID } from 'node:crypto';

/** What the fake Stripe stores and answers: JSON objects as the API returns them. */
export type StripeObject = Record<string, unknown>;

/** `metadata[user_id]=u1` form fields → `{ user_id: 'u1' }` (the SDK form-encodes nested params so). */
export function bracketed(form: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(form)) {
    const match = key.match(new RegExp(`^${prefix}\\[([^\\]]+)\\]$`));
    if (match?.[1]) out[match[1]] = value;
  }
  return out;
}

/** A fresh id with Stripe's prefix (`cus`, `seti`, `pm`, `pi`, `ch`), marked as the fake's. */
export function fakeId(prefix: string): string {
  return `${prefix}_fake_${randomUUID().replaceAll('-', '')}`;
}
