import type { Catalog } from '../catalog/catalog';
import type { Clock } from '../clock';
import { BillingError, NotConfiguredError } from '../errors';
import type { RevenueCatApi, RevenueCatSubscriberRead } from '../ports/revenuecat-api';
import type { EventPolicy } from '../provider-data/payment-environment';
import { inUnitOfWork, type UnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { isRevenueCatSentId, linkUserIds } from '../users/link-user-ids';
import { lockUser } from '../users/lock-user';
import {
  type ApplySubscriptionResult,
  applySubscriptionState,
  type SubscriptionCause,
} from './apply-subscription-state';
import { desiredRevenueCatSubscription } from './desired-revenuecat-subscription';
import { findSubscription, type SubscriptionView } from './find-subscription';

export interface RevenueCatSyncDeps {
  catalog: Catalog;
  policy: EventPolicy;
}

/**
 * The write half of a RevenueCat sync, shared by the worker (subscription events) and the
 * on-demand endpoint: under the canonical user's lock, turn a subscriber read (made earlier,
 * outside any transaction) into the user's subscription and history. "Now" is the unit's clock.
 */
export async function applyRevenueCatSubscriberRead(
  uow: UnitOfWork,
  deps: RevenueCatSyncDeps,
  input: { userId: string; read: RevenueCatSubscriberRead; cause: SubscriptionCause },
): Promise<ApplySubscriptionResult> {
  await lockUser(uow.trx, input.userId);
  const desired = desiredRevenueCatSubscription(input.read.subscriber, {
    catalog: deps.catalog,
    policy: deps.policy,
    now: uow.clock.now(),
  });
  return applySubscriptionState(uow, {
    userId: input.userId,
    source: 'revenuecat',
    desired,
    readAt: new Date(input.read.requestDateMs),
    cause: input.cause,
  });
}

/** The on-demand sync was asked about an id RevenueCat never sent (RevenueCat's read would create it). */
export class UnknownUserError extends BillingError {
  constructor(readonly userId: string) {
    super('unknown_user', `user ${userId} is not known from RevenueCat`, { retryable: false });
  }
}

/**
 * `POST /v1/users/{userId}/subscription/sync`: the same sync as the worker's, for an id
 * RevenueCat itself has sent (isRevenueCatSentId; UnknownUserError otherwise, without calling
 * RevenueCat, whose read creates customers — a user row made by a top-up or a studio request
 * does not count). The read happens outside any transaction; the write under the user's lock.
 */
export async function syncRevenueCatSubscriptionOnDemand(
  deps: RevenueCatSyncDeps & UnitOfWorkDeps & { clock: Clock; revenueCat: RevenueCatApi | undefined },
  input: { userId: string; requestId: string },
): Promise<{ result: ApplySubscriptionResult['kind']; subscription: SubscriptionView | undefined }> {
  if (!(await isRevenueCatSentId(deps.db, input.userId))) throw new UnknownUserError(input.userId);
  if (!deps.revenueCat) throw new NotConfiguredError('RevenueCat API (REVENUECAT_API_KEY)');
  const read = await deps.revenueCat.getSubscriber(input.userId);
  const result = await inUnitOfWork(deps, async (uow) => {
    const canonical = await linkUserIds(uow, [input.userId]);
    return applyRevenueCatSubscriberRead(uow, deps, {
      userId: canonical,
      read,
      cause: { kind: 'on_demand_sync', requestId: input.requestId },
    });
  });
  return { result: result.kind, subscription: await findSubscription(deps.db, input.userId) };
}
