import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { InboxSource, PaymentEnvironment, Provider } from '../db/schema';
import { InvalidEventError } from '../errors';

/**
 * What names an inbox event and indexes it for look-ups: what ingest extracts and stores, and what
 * operators see of it. Only the provider, event id and type are required; every other field may be null.
 */
export interface InboxEventIndex {
  provider: Provider;
  providerEventId: string;
  type: string;
  livemode: boolean | null;
  /** What the provider's live flag says (toPaymentEnvironment); null when the event named none. */
  environment: PaymentEnvironment | null;
  userId: string | null;
  providerCustomerId: string | null;
  providerSubscriptionId: string | null;
  providerPaymentIntentId: string | null;
  providerInvoiceId: string | null;
}

/** The inbox columns that store an InboxEventIndex, in its order. */
export const inboxIndexColumns = [
  'provider',
  'provider_event_id',
  'type',
  'livemode',
  'environment',
  'user_id',
  'provider_customer_id',
  'provider_subscription_id',
  'provider_payment_intent_id',
  'provider_invoice_id',
] as const;

/** What ingest extracts from a verified webhook before storing it: its index fields and its body. */
export interface InboxEventDraft extends InboxEventIndex {
  /** Stripe Connect account the event came from. Logged, not stored: the inbox has no column for it. */
  providerAccountId?: string | null;
  rawBody: string;
  /** Where the event came from: a webhook (default) or reconciliation's backfill from the provider's API. */
  source?: InboxSource;
}

export const MAX_ID_LENGTH = 255;
export const MAX_TYPE_LENGTH = 255;

// Cc (C0, DEL, C1): Postgres text cannot hold NUL at all, and the others have no business in an
// id. Cs, in a /u pattern, matches only lone surrogates: unpaired UTF-16 halves that the driver
// would silently turn into U+FFFD.
const unprintable = /[\p{Cc}\p{Cs}]/u;
const unprintableAll = /[\p{Cc}\p{Cs}]/gu;

/** Whether a string can be stored and indexed as sent: no control characters, no lone surrogates. */
function isPrintable(value: string): boolean {
  return !unprintable.test(value);
}

/**
 * Index columns are for look-ups, so only a plain, printable string of sensible length is kept
 * (trimmed). Anything else is dropped to null rather than repaired: stripping a control character
 * out of "user\u0000x" would name a different user, who may exist. Non-strings are null too (an
 * id that arrives as a number is already not what the provider documents).
 */
export function toIndexValue(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= MAX_ID_LENGTH && isPrintable(trimmed) ? trimmed : null;
}

/**
 * The provider's event id as the inbox's dedupe key. A string or a number (stringified) is
 * accepted; anything else, or an empty id, throws InvalidEventError, since without an id the
 * event cannot be deduplicated.
 *
 * An id that cannot be stored as sent (longer than 255 characters, or holding control
 * characters such as NUL, which Postgres text rejects, or lone surrogates, which the driver would
 * silently replace) is stored as `sha256:` + the hex SHA-256 of its JSON string form. That is
 * deterministic, so a redelivery maps to the same key and still deduplicates; the original stays
 * in the raw body, and the worker, whose parser refuses such ids, parks the event for an
 * operator instead of losing it.
 */
export function toProviderEventKey(value: unknown, field: string): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') throw new InvalidEventError(`${field} is missing or not a string`);
  const trimmed = text.trim();
  if (trimmed.length === 0) throw new InvalidEventError(`${field} is empty`);
  if (trimmed.length <= MAX_ID_LENGTH && isPrintable(trimmed)) return trimmed;
  return `sha256:${createHash('sha256').update(JSON.stringify(trimmed)).digest('hex')}`;
}

/**
 * The event id as the worker reads it from the raw body: a string or a number (as its digits),
 * trimmed, printable and at most 255 characters, so it can go into ledger references. Ingest
 * stores other ids under a digest key; the worker's parse refuses them and the event is parked.
 */
export const workerEventIdSchema = z
  .union([z.string(), z.number()])
  .transform((value) => String(value).trim())
  .pipe(
    z
      .string()
      .min(1)
      .max(MAX_ID_LENGTH)
      .refine(isPrintable, { message: 'contains control characters or unpaired surrogates' }),
  );

/**
 * The event type for the inbox's type column (listing and filtering only: the worker reads the
 * type from the raw body). A string or a number is accepted, anything else or an empty type
 * throws InvalidEventError. Control characters and lone surrogates become U+FFFD, visibly, and
 * an overlong type is cut to 255 characters ending in "…", so an odd type is still stored.
 */
export function toEventTypeValue(value: unknown, field: string): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') throw new InvalidEventError(`${field} is missing or not a string`);
  const cleaned = text.trim().replace(unprintableAll, '\ufffd');
  if (cleaned.length === 0) throw new InvalidEventError(`${field} is empty`);
  if (cleaned.length <= MAX_TYPE_LENGTH) return cleaned;
  // Cutting may split a surrogate pair; the stray half becomes U+FFFD like any other.
  return `${cleaned.slice(0, MAX_TYPE_LENGTH - 1)}…`.replace(unprintableAll, '\ufffd');
}

/** A verified body as a JSON object, or InvalidEventError when it is not JSON or not an object. */
export function parseJsonObject(rawBody: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new InvalidEventError('body is not valid JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new InvalidEventError('body is not a JSON object');
  }
  return json as Record<string, unknown>;
}

/**
 * A verified body parsed with a provider's schema for the worker. Throws InvalidEventError, saying
 * it is not `what`, naming the first field that is wrong (never its value, which may hold personal
 * data or control characters).
 */
export function parseEventBody<Schema extends z.ZodType>(
  rawBody: string,
  schema: Schema,
  what: string,
): z.output<Schema> {
  const parsed = schema.safeParse(parseJsonObject(rawBody));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEventError(
      `not ${what}: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}

/** A nested JSON object, or an empty one when the value is missing or not an object. */
export function objectAt(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
