import { runWithLease } from '@tally/platform/db';
import type { Kysely } from 'kysely';
import { GOOGLE_PLAY_VOIDED_PASS_LEASE } from '../../db/lease-names';
import type { DB } from '../../db/schema';
import { isRetryable, NotConfiguredError } from '../../errors';
import type { GooglePlayApi } from '../../ports/google-play-api';
import type { AppWebhookOutbox } from '../../unit-of-work/app-webhook-outbox';
import { inUnitOfWork } from '../../unit-of-work/unit-of-work';
import { dateOfMillis } from './google-play-orders';
import { type TakeBackVoidedResult, takeBackVoidedPurchase } from './take-back-voided-purchase';

/** How far back the pass asks: the Voided Purchases API keeps 30 days. */
export const VOIDED_PURCHASES_WINDOW_MS = 30 * 24 * 3600_000;

/** How long the pass's lease holds without renewal (renewed while it runs). */
export const GOOGLE_PLAY_VOIDED_PASS_LEASE_TTL_MS = 5 * 60_000;

export interface VoidedPassDeps {
  db: Kysely<DB>;
  outbox: AppWebhookOutbox;
  googlePlay: GooglePlayApi | undefined;
  now?: () => number;
}

/**
 * What one pass found: voids listed, taken back now, already taken back, never credited by Tally,
 * and deferred (its order busy in another transaction, or the database failing: the next pass).
 */
export interface VoidedPassReport {
  listed: number;
  takenBack: number;
  alreadyTakenBack: number;
  notCredited: number;
  deferred: number;
}

export type VoidedPassResult =
  | { kind: 'ran'; report: VoidedPassReport; leaseLost: boolean }
  | { kind: 'skipped'; reason: 'running-elsewhere' };

/**
 * The daily pass over `purchases.voidedpurchases.list` (the last 30 days): every voided purchase
 * whose notification never came (or came before its credit) is taken back with the same code
 * and the same fence as the notification (takeBackVoidedPurchase), each in a transaction of its
 * own, after the list was read outside any. Under a lease: one pass at a time across replicas
 * (a second would be safe, the fence takes back once, but spends API calls for nothing).
 */
export async function runVoidedPurchasesPass(deps: VoidedPassDeps): Promise<VoidedPassResult> {
  const api = deps.googlePlay;
  if (!api) throw new NotConfiguredError('the Play Developer API (GOOGLE_SERVICE_ACCOUNT_KEY_PATH)');
  const result = await runWithLease(
    deps.db,
    { name: GOOGLE_PLAY_VOIDED_PASS_LEASE, ttlMs: GOOGLE_PLAY_VOIDED_PASS_LEASE_TTL_MS },
    () => pass(deps, api),
  );
  return result.kind === 'ran'
    ? { kind: 'ran', report: result.value, leaseLost: result.lost }
    : { kind: 'skipped', reason: 'running-elsewhere' };
}

async function pass(deps: VoidedPassDeps, api: GooglePlayApi): Promise<VoidedPassReport> {
  const now = deps.now ?? Date.now;
  const report: VoidedPassReport = { listed: 0, takenBack: 0, alreadyTakenBack: 0, notCredited: 0, deferred: 0 };
  // guard: google-voided-pass-window
  const startTimeMillis = now() - VOIDED_PURCHASES_WINDOW_MS;
  let pageToken: string | undefined;
  do {
    const page = await api.listVoidedPurchases({ startTimeMillis, ...(pageToken ? { pageToken } : {}) });
    for (const voided of page.voidedPurchases) {
      report.listed += 1;
      let result: TakeBackVoidedResult;
      try {
        result = await inUnitOfWork(deps, (uow) =>
          takeBackVoidedPurchase(uow, {
            orderId: voided.orderId,
            purchaseToken: voided.purchaseToken,
            seenBy: 'voided_purchases_api',
            voidedAt: dateOfMillis(voided.voidedTimeMillis),
            inboxEventId: null,
          }),
        );
      } catch (error) {
        if (!isRetryable(error)) throw error;
        report.deferred += 1;
        continue;
      }
      if (result.kind === 'not-credited') report.notCredited += 1;
      else if (result.kind === 'already-refunded') report.alreadyTakenBack += 1;
      else report.takenBack += 1;
    }
    pageToken = page.nextPageToken;
  } while (pageToken);
  return report;
}
