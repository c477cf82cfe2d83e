import type { Provider } from '../db/schema';

/** What ingest extracts from a verified webhook before storing it. Everything but the ids is optional. */
export interface InboxEventDraft {
  provider: Provider;
  providerEventId: string;
  type: string;
  livemode: boolean | null;
  environment: string | null;
  userId: string | null;
  providerCustomerId: string | null;
  providerSubscriptionId: string | null;
  providerPaymentIntentId: string | null;
  providerInvoiceId: string | null;
  rawBody: string;
}

export const MAX_ID_LENGTH = 255;

/** Index columns are for look-ups; an absurdly long value is dropped rather than stored. */
export function toIndexValue(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= MAX_ID_LENGTH ? trimmed : null;
}
