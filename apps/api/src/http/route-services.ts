import type {
  AppleReconcileSources,
  AppWebhookOutbox,
  CaptureHoldResult,
  CapturePricedHoldResult,
  CaptureRequest,
  Catalog,
  Clock,
  DB,
  DebitRequest,
  DebitResult,
  EventPolicy,
  HoldPlacement,
  PlaceHoldResult,
  PlacePricedHoldResult,
  PricedCaptureRequest,
  PricedPlacementRequest,
  RecordUsageResult,
  RevenueCatApi,
  SpendLimitDefaults,
  StripeApi,
  UsageRequest,
} from '@tally/billing-core';
import type { Kysely } from 'kysely';
import type { AppWebhookDelivery } from '../app-webhook-delivery';

/** What a queue hand-off says: rows it could not hand over wait for the relay. */
export type HandOff = (ids: number[]) => Promise<{ enqueued: number; alreadyQueued: number; deferred: number }>;

/**
 * What route handlers are given besides their request (`handler(input, services)`): the one set
 * of services every /v1 and /admin route draws from, so a definition stays a constant the
 * OpenAPI document can read without them. createApiApp's deps are these and more.
 */
export interface RouteServices {
  db: Kysely<DB>;
  /**
   * How the api writes app webhook messages (studio debits, top-ups, subscription syncs): the
   * low-balance threshold, and with APP_WEBHOOK_URL the hand-off to the app-webhooks queue after commit.
   */
  outbox: AppWebhookOutbox;
  /** Hands requeued and replayed inbox rows to their queue. */
  enqueue: HandOff;
  /** Hands redelivered app webhook messages to their queue (the relay picks up what fails). */
  enqueueAppWebhooks: HandOff;
  /**
   * `not_configured` when APP_WEBHOOK_URL is unset: the console, the admin message routes and the
   * queue dashboard say messages are written, not delivered (default `on`).
   */
  appWebhookDelivery?: AppWebhookDelivery;
  /** Subscription reads and the on-demand RevenueCat sync; without it the sync answers 503. */
  subscriptions?: { catalog: Catalog; policy: EventPolicy; revenueCat: RevenueCatApi | undefined } | undefined;
  /** AI Studio (and `check`): the catalog, the clock of the free allowance, the studio queue hand-off. */
  studio: {
    catalog: Catalog;
    clock: Clock;
    /** Hands committed request rows to the studio queue; rows it cannot hand off go to the relay. */
    enqueueStudio: (studioRequestIds: number[]) => Promise<{ deferred: number; error?: unknown }>;
  };
  /** Top-ups need the catalog and the Stripe API; without them those routes answer 503. */
  catalog?: Catalog;
  stripe?: StripeApi | undefined;
  /**
   * Apple reconciliation: the App Store Server API, the notification check and PAYMENT_ENVIRONMENTS;
   * without it `POST /admin/reconcile/apple` answers 503.
   */
  appleReconcile?: AppleReconcileSources | undefined;
  /** Holds: HOLD_DEFAULT_TTL_SECONDS (default 900). */
  holds?: { defaultTtlSeconds: number };
  /** SPEND_LIMIT_DAILY and SPEND_LIMIT_MONTHLY: every spend and the limits' routes read them (docs/spend-limits.md). */
  spendLimits: SpendLimitDefaults;
  /**
   * An app's debit (`POST /debits`), answered as billing-core debitTokens answers it, in a
   * transaction shared with the debits arriving at the same time (createApiApp's debit batcher:
   * debitTokensTogether, SPEND_BATCH_MAX_DEBITS and SPEND_BATCH_TRANSACTIONS).
   */
  debit: (request: DebitRequest) => Promise<DebitResult>;
  /** A usage (`POST /usage`), answered as billing-core recordUsage answers it, batched as debits are (recordUsagesTogether). */
  recordUsage: (request: UsageRequest) => Promise<RecordUsageResult>;
  /**
   * A hold placed with an amount (`POST /holds`) and an amount capture (`POST /holds/{id}/capture`),
   * answered as billing-core placeHold and captureHold answer them alone, in transactions shared
   * with the placements and captures arriving at the same time (one batcher for both:
   * holdOperationsTogether, with the debits' settings).
   */
  placeHold: (placement: HoldPlacement) => Promise<PlaceHoldResult>;
  captureHold: (request: CaptureRequest) => Promise<CaptureHoldResult>;
  /** A hold by estimate and its capture, answered as placePricedHold and capturePricedHold answer them alone, in the same batcher. */
  placePricedHold: (request: PricedPlacementRequest) => Promise<PlacePricedHoldResult>;
  capturePricedHold: (request: PricedCaptureRequest) => Promise<CapturePricedHoldResult>;
}
