import type { FlowAppWebhookMessage } from '../app-webhooks/app-webhook-message-types';
import type { StudioRequestRow } from '../db/schema';

/** The app webhook message of a settled (completed or failed) studio request. */
export function studioRequestMessage(request: StudioRequestRow): FlowAppWebhookMessage {
  const failed = request.status === 'failed';
  return {
    type: failed ? 'studio.request.failed' : 'studio.request.completed',
    userId: request.user_id,
    data: {
      userId: request.user_id,
      id: request.public_id,
      kind: request.kind,
      status: failed ? 'failed' : 'completed',
      tokensCharged: request.tokens_charged,
      refunded: request.refunded_at !== null,
      error: failed ? { code: request.error_code, message: request.error } : null,
    },
  };
}
