import type { InboxStatus } from '../db/schema';
import type { InboxEventIndex } from './inbox-event-draft';
import type { InboxEventSummary } from './list-inbox-events';

/** How an inbox row is shown to operators (admin API, support view, CLI): one shape everywhere. */
export interface InboxEventView extends InboxEventIndex {
  id: number;
  status: InboxStatus;
  attempts: number;
  lastError: string | null;
  outcome: { code: string; detail: string | null } | null;
  nextAttemptAt: Date | null;
  waitingSince: Date | null;
  deferrals: number;
  replays: number;
  replayedAt: Date | null;
  receivedAt: Date;
  processedAt: Date | null;
  updatedAt: Date;
  source: InboxEventSummary['source'];
  rawBodyPrunedAt: Date | null;
}

export function toInboxEventView(event: InboxEventSummary): InboxEventView {
  return {
    id: event.id,
    provider: event.provider,
    providerEventId: event.provider_event_id,
    type: event.type,
    livemode: event.livemode,
    environment: event.environment,
    userId: event.user_id,
    providerCustomerId: event.provider_customer_id,
    providerSubscriptionId: event.provider_subscription_id,
    providerPaymentIntentId: event.provider_payment_intent_id,
    providerInvoiceId: event.provider_invoice_id,
    status: event.status,
    attempts: event.attempts,
    lastError: event.last_error,
    outcome: event.outcome_code === null ? null : { code: event.outcome_code, detail: event.outcome_detail },
    nextAttemptAt: event.next_attempt_at,
    waitingSince: event.waiting_since,
    deferrals: event.deferrals,
    replays: event.replays,
    replayedAt: event.replayed_at,
    receivedAt: event.received_at,
    processedAt: event.processed_at,
    updatedAt: event.updated_at,
    source: event.source,
    rawBodyPrunedAt: event.raw_body_pruned_at,
  };
}
