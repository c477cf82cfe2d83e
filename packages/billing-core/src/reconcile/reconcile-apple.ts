import { type Clock, systemClock } from '../clock';
import { RECONCILE_APPLE_LEASE } from '../db/lease-names';
import type { PaymentEnvironment } from '../db/schema';
import { InvalidEventError, NotConfiguredError } from '../errors';
import type { InboxEventDraft } from '../inbox/inbox-event-draft';
import type { AppStoreApi } from '../ports/app-store-api';
import { toAppleInboxDraft } from '../provider-data/apple-signed-data';
import type { AppleNotificationVerifier, AppleVerification } from '../providers/apple/verify-apple-notification';
import {
  type BackfillDeps,
  type BackfillResult,
  backfillInboxDrafts,
  findStoredEventIds,
} from './backfill-inbox-drafts';
import {
  type ExclusiveRun,
  ReconcileWindowError,
  runReconciliationExclusively,
} from './run-reconciliation-exclusively';

/** How far back Get Notification History reaches: 180 days in production, 30 in the sandbox (Apple). */
export const APPLE_NOTIFICATION_HISTORY_DAYS: Readonly<Record<PaymentEnvironment, number>> = {
  production: 180,
  sandbox: 30,
};
/** The longest window a run may ask for (the sandbox's history is read over its own 30 days at most). */
export const APPLE_RECONCILE_MAX_WINDOW_DAYS = APPLE_NOTIFICATION_HISTORY_DAYS.production;
/**
 * The window when nobody names one: Apple retries an unanswered notification for three days, so
 * an hourly pass over three days finds what an outage lost. The schemas of the worker's
 * APPLE_RECONCILE_WINDOW_DAYS, the admin route's body and the CLI's --days read it.
 */
export const DEFAULT_APPLE_RECONCILE_WINDOW_DAYS = 3;
const DAY_MS = 24 * 3600_000;

/** What reconciliation needs of Apple: both halves of its configuration, and which histories to read. */
export interface AppleReconcileSources {
  /** The App Store Server API (APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH, APPLE_BUNDLE_ID). */
  api: AppStoreApi;
  /** The one notification check ingest uses too (APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID). */
  verify: AppleNotificationVerifier;
  /** The environments whose history is read: PAYMENT_ENVIRONMENTS, those that move money. */
  environments: readonly PaymentEnvironment[];
}

export interface ReconcileAppleDeps extends BackfillDeps {
  /** Undefined while either half of Apple's configuration is missing: NotConfiguredError, and no call. */
  apple: AppleReconcileSources | undefined;
  /** "Now", from which the window counts back (default the system clock). */
  clock?: Clock;
}

export interface ReconcileAppleOptions {
  /** Days back from now (at most 180; the sandbox's history keeps 30). Fractions are allowed. */
  windowDays: number;
  /** Report only: missing notifications are listed, not recorded. */
  dryRun?: boolean;
  /** Stops listing after this many notifications (the report says `truncated`). */
  maxNotifications?: number;
}

/** A verified notification the inbox lacked, and what reconciliation did with it. */
export interface MissingAppleNotification {
  notificationUUID: string;
  type: string;
  environment: PaymentEnvironment;
  /** When Apple signed it (ISO), if it says. */
  signedDate: string | null;
  result: BackfillResult;
  inboxEventId: number | null;
}

/** A listed notification that failed the check: never stored. */
export interface RefusedAppleNotification {
  /** The history (Apple's host of that environment) that listed it. */
  listedBy: PaymentEnvironment;
  code: 'invalid_event' | 'invalid_signature' | 'wrong_app';
  reason: string;
}

export interface AppleReconciliationReport {
  /** Nothing missing and nothing refused. */
  ok: boolean;
  dryRun: boolean;
  windowDays: number;
  windowStart: string;
  environments: PaymentEnvironment[];
  truncated: boolean;
  /** Notifications the histories listed (one listed twice counts once). */
  seen: number;
  /** Verified and already in the inbox (delivered, or recorded by an earlier run). */
  alreadyStored: number;
  /** Verified, missing, and recorded now (source 'backfill') and handed to the queue; 0 in a dry run. */
  recorded: number;
  /** Failed verification: never stored. */
  refused: number;
  missingNotifications: MissingAppleNotification[];
  refusedNotifications: RefusedAppleNotification[];
}

interface Listed {
  environment: PaymentEnvironment;
  signedPayload: string | null;
}

type Checked =
  | { kind: 'verified'; draft: InboxEventDraft; environment: PaymentEnvironment; signedDate: number | null }
  | { kind: 'refused'; refusal: RefusedAppleNotification };

/**
 * Apple reconciliation over a window (default 3 days, at most 180): reads Get Notification History
 * of each environment in `apple.environments` page by page (all API calls first, none inside a
 * transaction), verifies every listed `signedPayload` with the notification check ingest uses,
 * and records each verified notification whose notificationUUID the inbox lacks through ingest's
 * own path (backfillInboxDrafts: the unique (apple, notificationUUID) index, so a late delivery
 * racing the run stores one row; then the queue), oldest first, as Apple would have delivered
 * them. A notification that fails the check is counted as refused and never stored. A second run
 * records nothing new. `dryRun` reports what it would record and stores nothing.
 *
 * Throws NotConfiguredError without `apple` (before any call), ReconcileWindowError for a window
 * outside (0, 180] days, and what the App Store API port throws (rows already recorded are whole
 * inbox rows).
 */
export async function reconcileApple(
  deps: ReconcileAppleDeps,
  options: ReconcileAppleOptions,
): Promise<AppleReconciliationReport> {
  const { windowDays } = options;
  if (!(windowDays > 0 && windowDays <= APPLE_RECONCILE_MAX_WINDOW_DAYS)) {
    throw new ReconcileWindowError(windowDays, {
      maxDays: APPLE_RECONCILE_MAX_WINDOW_DAYS,
      keeps: "Apple's notification history keeps 180 days",
    });
  }
  const apple = deps.apple;
  if (!apple) {
    throw new NotConfiguredError(
      'Apple reconciliation (the App Store Server API and the notification check: APPLE_KEY_ID, APPLE_ISSUER_ID, APPLE_PRIVATE_KEY_PATH, APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID)',
    );
  }
  const dryRun = options.dryRun ?? false;
  const now = (deps.clock ?? systemClock).now();
  const windowStart = new Date(now.getTime() - windowDays * DAY_MS);
  const { listed, truncated } = await listHistory(apple, {
    windowStart,
    now,
    maxNotifications: options.maxNotifications ?? 10_000,
  });

  const verified = new Map<string, Extract<Checked, { kind: 'verified' }>>();
  const refusedNotifications: RefusedAppleNotification[] = [];
  for (const item of listed) {
    const checked = await check(apple.verify, item);
    if (checked.kind === 'refused') refusedNotifications.push(checked.refusal);
    else if (!verified.has(checked.draft.providerEventId)) verified.set(checked.draft.providerEventId, checked);
  }

  const stored = await findStoredEventIds(deps.db, 'apple', [...verified.keys()]);
  // guard: apple-reconcile-only-missing
  const missing = [...verified.values()].filter((item) => !stored.has(item.draft.providerEventId));
  // Oldest first, as Apple would have delivered them (a notification without a date last).
  missing.sort((a, b) => (a.signedDate ?? Number.MAX_SAFE_INTEGER) - (b.signedDate ?? Number.MAX_SAFE_INTEGER));
  const backfilled = await backfillInboxDrafts(
    deps,
    missing.map((item) => item.draft),
    { dryRun },
  );
  const missingNotifications = backfilled.map(({ draft, result, inboxEventId }, index): MissingAppleNotification => {
    const item = missing[index] as (typeof missing)[number];
    return {
      notificationUUID: draft.providerEventId,
      type: draft.type,
      environment: item.environment,
      signedDate: item.signedDate === null ? null : new Date(item.signedDate).toISOString(),
      result,
      inboxEventId,
    };
  });
  return {
    ok: missingNotifications.length === 0 && refusedNotifications.length === 0,
    dryRun,
    windowDays,
    windowStart: windowStart.toISOString(),
    environments: [...apple.environments],
    truncated,
    seen: verified.size + refusedNotifications.length,
    alreadyStored: verified.size - missing.length,
    recorded: missingNotifications.filter((item) => item.result === 'ingested').length,
    refused: refusedNotifications.length,
    missingNotifications,
    refusedNotifications,
  };
}

/**
 * Every notification the histories list in the window, environment by environment, page by page,
 * at most `maxNotifications`. The sandbox's history is read over its last 30 days at most (Apple
 * refuses an older start).
 */
async function listHistory(
  apple: AppleReconcileSources,
  options: { windowStart: Date; now: Date; maxNotifications: number },
): Promise<{ listed: Listed[]; truncated: boolean }> {
  const listed: Listed[] = [];
  const endDate = options.now.getTime();
  for (const environment of apple.environments) {
    const oldest = endDate - APPLE_NOTIFICATION_HISTORY_DAYS[environment] * DAY_MS;
    const timespan = { startDate: Math.max(options.windowStart.getTime(), oldest), endDate };
    let paginationToken: string | undefined;
    do {
      const page = await apple.api.getNotificationHistory(environment, timespan, paginationToken);
      for (const signedPayload of page.signedPayloads) listed.push({ environment, signedPayload });
      if (listed.length >= options.maxNotifications && page.paginationToken !== null) {
        return { listed, truncated: true };
      }
      paginationToken = page.paginationToken ?? undefined;
    } while (paginationToken !== undefined);
  }
  return { listed, truncated: false };
}

/**
 * One listed notification through the check ingest uses, on the body a delivery of it would
 * carry (`{"signedPayload"}`, which is also what the inbox stores and the worker parses); then
 * ingest's draft of it, as a delivery would be stored. What ingest would answer 400 is refused.
 */
async function check(verify: AppleNotificationVerifier, item: Listed): Promise<Checked> {
  const refused = (code: RefusedAppleNotification['code'], reason: string): Checked => ({
    kind: 'refused',
    refusal: { listedBy: item.environment, code, reason },
  });
  const rawBody = JSON.stringify({ signedPayload: item.signedPayload });
  // guard: apple-reconcile-verified
  const verification: AppleVerification = await verify(rawBody);
  if (!verification.ok) return refused(verification.code, verification.reason);
  try {
    return {
      kind: 'verified',
      draft: toAppleInboxDraft(rawBody, verification),
      environment: verification.environment,
      signedDate: verification.signedDate,
    };
  } catch (error) {
    if (error instanceof InvalidEventError) return refused('invalid_event', error.message);
    throw error;
  }
}

/**
 * reconcileApple under its lease (runReconciliationExclusively), for the apple-reconcile role:
 * one pass at a time across its replicas. Manual runs (`POST /admin/reconcile/apple`,
 * `tally reconcile --provider apple`) do not take it. Throws what reconcileApple throws.
 */
export function reconcileAppleExclusively(
  deps: ReconcileAppleDeps,
  options: ReconcileAppleOptions,
): Promise<ExclusiveRun<AppleReconciliationReport>> {
  return runReconciliationExclusively(deps.db, { name: RECONCILE_APPLE_LEASE }, () => reconcileApple(deps, options));
}

/** An Apple reconciliation report in a few numbers: what logs and the audit keep of a run. */
export function summarizeAppleReconciliation(report: AppleReconciliationReport) {
  return {
    ok: report.ok,
    dryRun: report.dryRun,
    windowDays: report.windowDays,
    environments: report.environments,
    truncated: report.truncated,
    seen: report.seen,
    alreadyStored: report.alreadyStored,
    recorded: report.recorded,
    missing: report.missingNotifications.length,
    refused: report.refused,
  };
}
