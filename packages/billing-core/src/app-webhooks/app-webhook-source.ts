import { queueCatalog } from '../contracts/queues';
import { createDurableRowSource } from '../relay/durable-row-source';

/**
 * App webhook messages as a relay source: the relay is how a new message first reaches the queue
 * (its writers are deep inside money transactions and hold no queue), how a lost job comes back,
 * and how a message left processing by a dead worker is delivered again.
 */
export const appWebhookSource = createDurableRowSource({
  name: 'app-webhooks',
  table: 'app_webhook_messages',
  pendingStatus: 'pending',
  processingStatus: 'processing',
  queue: queueCatalog.appWebhooks,
  toPayload: (appWebhookMessageId) => ({ appWebhookMessageId }),
});
