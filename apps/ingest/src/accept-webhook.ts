import {
  type DB,
  type InboxEventDraft,
  isDatabaseUnavailableError,
  markInboxEnqueueFailed,
  recordInboxEvent,
} from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import type { Kysely } from 'kysely';

export type AcceptWebhookResult =
  | { kind: 'accepted'; inboxEventId: number; enqueued: boolean }
  | { kind: 'duplicate'; inboxEventId: number | null }
  | { kind: 'unavailable' };

/**
 * Record, then enqueue. The row is durable before anything else happens; if the queue cannot
 * take the id (Redis down), the answer is still "accepted" and the relay enqueues it later.
 * Only a database that cannot be reached makes the provider retry.
 */
export async function acceptWebhook(
  deps: { db: Kysely<DB>; enqueue: (inboxEventId: number) => Promise<unknown>; logger: Logger },
  draft: InboxEventDraft,
): Promise<AcceptWebhookResult> {
  let recorded: Awaited<ReturnType<typeof recordInboxEvent>>;
  try {
    recorded = await recordInboxEvent(deps.db, draft);
  } catch (error) {
    if (isDatabaseUnavailableError(error)) return { kind: 'unavailable' };
    throw error;
  }
  if (recorded.kind === 'duplicate') return recorded;
  const { inboxEventId } = recorded;
  try {
    await deps.enqueue(inboxEventId);
    return { kind: 'accepted', inboxEventId, enqueued: true };
  } catch (error) {
    deps.logger.warn(
      { err: error, inboxEventId, provider: draft.provider, providerEventId: draft.providerEventId },
      'enqueue failed; the relay will hand this event to the queue',
    );
    await markInboxEnqueueFailed(deps.db, inboxEventId).catch(() => undefined);
    return { kind: 'accepted', inboxEventId, enqueued: false };
  }
}
