import type { Transaction } from 'kysely';
import type { SubscriptionUpdatedData } from '../app-webhooks/app-webhook-message-types';
import { writeAppWebhookMessage } from '../app-webhooks/write-app-webhook-message';
import type { DB } from '../db/schema';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { chooseSubscription, subscriptionCandidatesOf, toSubscriptionView } from './find-subscription';

/**
 * The user's subscription as the app sees it (`GET /v1/users/{userId}/subscription`, both
 * sources combined), or null when there is none; read inside the writer's transaction.
 */
export async function readAnnouncedSubscription(
  trx: Transaction<DB>,
  canonicalUserId: string,
): Promise<SubscriptionUpdatedData | null> {
  const best = chooseSubscription(await subscriptionCandidatesOf(trx, canonicalUserId));
  if (!best) return null;
  const { planId, status, expiresAt, store, autoRenew } = toSubscriptionView(canonicalUserId, best);
  return { userId: canonicalUserId, planId, status, expiresAt, store, autoRenew };
}

/**
 * After a subscription write: writes one `subscription.updated` message when the subscription the
 * app sees differs from `before` (read by the caller before the write), and nothing otherwise, so
 * a write that changes no field the app sees (a re-read, a fence-only update) sends nothing.
 * Returns whether a message was written.
 */
export async function announceSubscriptionChange(
  uow: UnitOfWork,
  canonicalUserId: string,
  before: SubscriptionUpdatedData | null,
): Promise<boolean> {
  const { trx } = uow;
  const after = await readAnnouncedSubscription(trx, canonicalUserId);
  if (after === null || sameSubscription(before, after)) return false;
  await writeAppWebhookMessage(uow, { type: 'subscription.updated', userId: canonicalUserId, data: after });
  return true;
}

function sameSubscription(a: SubscriptionUpdatedData | null, b: SubscriptionUpdatedData): boolean {
  return (
    a !== null &&
    a.planId === b.planId &&
    a.status === b.status &&
    a.expiresAt === b.expiresAt &&
    a.store === b.store &&
    a.autoRenew === b.autoRenew
  );
}
