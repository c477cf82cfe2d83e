import { queueCatalog } from '../contracts/queues';
import { createDurableRowSource } from '../relay/durable-row-source';

/**
 * Studio requests as a relay source: received rows due for work whose job is missing (the API's
 * hand-off failed, Redis lost it). Rows stuck in processing are NOT re-enqueued: their request
 * may already have reached the AI service, so the sweeper fails and refunds them instead.
 */
export const studioRelaySource = createDurableRowSource({
  name: 'studio',
  table: 'studio_requests',
  pendingStatus: 'received',
  queue: queueCatalog.studio,
  toPayload: (studioRequestId) => ({ studioRequestId }),
});
