import { queueCatalog } from '../contracts/queues';
import { createDurableRowSource } from '../relay/durable-row-source';

/** The inbox as a relay source: received rows due for work, processing rows whose worker died. */
export const inboxRelaySource = createDurableRowSource({
  name: 'inbox',
  table: 'inbox_events',
  pendingStatus: 'received',
  processingStatus: 'processing',
  queue: queueCatalog.inbox,
  toPayload: (inboxEventId) => ({ inboxEventId }),
});
