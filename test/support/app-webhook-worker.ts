import { createAppWebhookSender } from '@tally/billing-core';
import type { AppWebhookReceiver } from './fakes/app-webhook-receiver';
import type { WorkerSettings } from './stack';

/**
 * Worker settings that deliver app webhooks to `receiver`, signed with its secrets: the relay every
 * 100 ms, `retryScheduleMs` between attempts (then the message is failed), two at a time.
 */
export function deliveringTo(
  receiver: AppWebhookReceiver,
  options: { retryScheduleMs: number[]; roles: NonNullable<WorkerSettings['roles']> },
): WorkerSettings {
  return {
    roles: options.roles,
    relay: { intervalMs: 100, staleAfterMs: 60_000, processingStaleAfterMs: 60_000, batchSize: 100 },
    appWebhooks: {
      sender: createAppWebhookSender({ url: receiver.url, secrets: receiver.secrets, timeoutMs: 2_000 }),
      retryScheduleMs: options.retryScheduleMs,
      concurrency: 2,
      retentionDays: 30,
    },
  };
}
