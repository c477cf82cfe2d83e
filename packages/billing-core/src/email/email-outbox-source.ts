import { queueCatalog } from '../contracts/queues';
import { createDurableRowSource } from '../relay/durable-row-source';

/** The email outbox as a relay source: pending rows due for sending, processing rows whose worker died. */
export const emailOutboxSource = createDurableRowSource({
  name: 'email',
  table: 'email_outbox',
  pendingStatus: 'pending',
  processingStatus: 'processing',
  queue: queueCatalog.email,
  toPayload: (emailId) => ({ emailId }),
});
