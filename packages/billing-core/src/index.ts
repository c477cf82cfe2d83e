export * from './app-webhooks/app-webhook-body';
export * from './app-webhooks/app-webhook-message-types';
export * from './app-webhooks/app-webhook-source';
export * from './app-webhooks/create-app-webhook-sender';
export * from './app-webhooks/deliver-app-webhook-message';
export * from './app-webhooks/list-app-webhook-messages';
export * from './app-webhooks/prune-app-webhook-messages';
export * from './app-webhooks/read-app-webhook-gauges';
export * from './app-webhooks/redeliver-app-webhook-message';
export * from './app-webhooks/webhook-id';
export * from './audit/admin-actions';
export * from './audit/key-fingerprint';
export * from './audit/list-admin-actions';
export * from './audit/record-admin-action';
export * from './audit/run-audited-action';
export * from './auto-topup/auto-topup-settings';
export * from './auto-topup/charge-auto-topup';
export * from './auto-topup/finish-auto-topup';
export * from './auto-topup/payment-methods';
export * from './auto-topup/prepare-auto-topup-charge';
export * from './auto-topup/trigger-auto-topup';
export * from './catalog/catalog';
export type { CatalogData, Plan, TokenPack } from './catalog/catalog-schema';
export * from './catalog/feature-table';
export * from './catalog/price-usage';
export * from './clock';
export * from './contracts/queues';
export * from './db/advisory-locks';
export * from './db/lease-names';
export * from './db/lock-studio-user';
export * from './db/migrations-dir';
export type {
  AdminAuditRow,
  AdminSurface,
  AppleConsumptionRequestRow,
  AppleRefundRow,
  AppWebhookMessageRow,
  AppWebhookMessageStatus,
  AppWebhookMessageType,
  AutoTopupAttemptRow,
  AutoTopupAttemptStatus,
  AutoTopupDisabledReason,
  AutoTopupSettingsRow,
  DB,
  EmailOutboxRow,
  HoldRow,
  HoldStatus,
  IdempotencyKeyRow,
  IdempotencyRecoveryPoint,
  InboxEventRow,
  InboxSource,
  InboxStatus,
  LedgerEntryRow,
  PaymentRow,
  Provider,
  StripeInstallmentRow,
  StripeSubscriptionRow,
  StudioRequestRow,
  SubscriptionHistoryRow,
  SubscriptionRow,
  TopupRow,
  WalletRow,
} from './db/schema';
export {
  adminSurfaces,
  appleConsumptionStatuses,
  appWebhookMessageStatuses,
  appWebhookMessageTypes,
  autoTopupAttemptStatuses,
  defaultPaymentEnvironments,
  holdStatuses,
  idempotencyRecoveryPoints,
  inboxSources,
  inboxStatuses,
  lotCategories,
  paymentEnvironments,
  providers,
  studioRequestStatuses,
} from './db/schema';
export * from './email/email-outbox-source';
export * from './email/requeue-outbox-emails';
export * from './email/send-outbox-email';
export * from './errors';
export * from './feature-uses/decide-feature-charge';
export * from './features/priced-holds';
export * from './features/record-usage';
export * from './features/usage-report';
export * from './grants/grant-tokens';
export * from './grants/void-lot';
export * from './holds/end-hold';
export * from './holds/list-holds';
export * from './holds/lock-wallet-funds';
export * from './holds/place-hold';
export * from './idempotency/advance-idempotency-key';
export * from './idempotency/claim-idempotency-key';
export * from './idempotency/fingerprint-request-body';
export * from './idempotency/finish-idempotency-key';
export * from './idempotency/idempotency-key-format';
export * from './idempotency/idempotency-key-in-transaction';
export * from './idempotency/idempotency-types';
export * from './idempotency/release-idempotency-key';
export * from './idempotency/stored-idempotency-key';
export * from './inbox/find-oldest-due-age';
export { type InboxEventDraft, type InboxEventIndex, inboxIndexColumns } from './inbox/inbox-event-draft';
export * from './inbox/inbox-handler';
export * from './inbox/inbox-relay-source';
export * from './inbox/list-inbox-events';
export * from './inbox/outcome-codes';
export * from './inbox/plan-attempt';
export * from './inbox/process-inbox-events';
export * from './inbox/record-inbox-event';
export * from './inbox/record-inbox-events';
export * from './inbox/replay-inbox-events';
export * from './inbox/requeue-inbox-events';
export * from './inbox/to-inbox-event-view';
export * from './installments/grant-due-installments';
export * from './ledger/debt';
export { ensureWallet } from './ledger/ensure-wallet';
export * from './ledger/held-tokens';
export * from './ledger/open-missing-lots';
export * from './ledger/post-ledger-entries';
export * from './ledger/post-ledger-entry';
export * from './ledger/read-wallet';
export * from './ledger/verify-ledger';
export * from './lot-expiry/expire-lots';
export * from './operations/ledger-totals';
export * from './operations/read-hourly-activity';
export * from './operations/read-operational-counts';
export type { AiStudioService } from './ports/ai-studio-service';
export type {
  AppleConsumptionInformation,
  AppleNotificationHistoryPage,
  AppleNotificationHistoryRequest,
  AppleSubscriptionStatus,
  AppStoreApi,
} from './ports/app-store-api';
export type { AppWebhookAttempt, AppWebhookDelivery, AppWebhookSender } from './ports/app-webhook-sender';
export type {
  GooglePlayApi,
  GooglePlayProductPurchase,
  GooglePlaySubscriptionPurchase,
  GooglePlayVoidedPurchase,
  GooglePlayVoidedPurchasesPage,
} from './ports/google-play-api';
export type { Mailer } from './ports/mailer';
export type { ProviderPorts } from './ports/provider-ports';
export type {
  RevenueCatApi,
  RevenueCatSubscriber,
  RevenueCatSubscriberRead,
  RevenueCatSubscription,
} from './ports/revenuecat-api';
export { type StripeApi, StripeCardError } from './ports/stripe-api';
export * from './provider-data/apple-signed-data';
export * from './provider-data/payment-environment';
export * from './providers/ai-studio/create-ai-studio-client';
export * from './providers/apple/answer-consumption-request';
export * from './providers/apple/app-store-api-client';
export { appleHandledEventTypes } from './providers/apple/create-apple-handler';
export * from './providers/apple/verify-apple-notification';
export * from './providers/create-inbox-handlers';
export * from './providers/google-play/consume-google-play-purchases';
export { googlePlayHandledEventTypes } from './providers/google-play/create-google-play-handler';
export * from './providers/google-play/google-play-api-client';
export {
  parseGooglePlayPush,
  toGooglePlayInboxDraftFromBody,
} from './providers/google-play/google-play-notification';
export * from './providers/google-play/service-account-token';
export * from './providers/google-play/voided-purchases-pass';
export * from './providers/revenuecat/revenuecat-api-client';
export {
  parseRevenueCatWebhook,
  toRevenueCatInboxDraft,
  toRevenueCatInboxDraftFromBody,
} from './providers/revenuecat/revenuecat-event';
export * from './providers/stripe/create-stripe-api';
export { stripeHandledEventTypes } from './providers/stripe/create-stripe-handler';
export { parseStripeEvent, toStripeInboxDraft, toStripeInboxDraftFromBody } from './providers/stripe/stripe-event';
export * from './reconcile/backfill-inbox-drafts';
export * from './reconcile/reconcile-apple';
export * from './reconcile/reconcile-stripe';
export * from './reconcile/reconcile-stripe-exclusively';
export * from './reconcile/run-reconciliation-exclusively';
export * from './reconcile/summarize-reconciliation';
export * from './references';
export * from './relay/durable-row-source';
export * from './retention/prune-idempotency-keys';
export * from './retention/prune-inbox-raw-bodies';
export * from './scheduling/backoff';
export * from './spend-limits/read-spend-limits';
export * from './spend-limits/spend-limits';
export * from './spend-limits/uncount-spend';
export * from './spending/check-spend';
export * from './spending/debit-tokens';
export * from './spending/hold-operations-together';
export * from './stores/store-accounts';
export * from './studio/ai-studio-errors';
export * from './studio/claim-studio-request';
export * from './studio/complete-studio-request';
export * from './studio/create-studio-request';
export * from './studio/fail-studio-request';
export * from './studio/find-studio-requests';
export * from './studio/price-studio-request';
export * from './studio/process-studio-request';
export * from './studio/refund-studio-request';
export * from './studio/studio-relay-source';
export * from './studio/studio-types';
export * from './studio/sweep-stuck-studio-requests';
export * from './subscriptions/apply-subscription-state';
export * from './subscriptions/desired-revenuecat-subscription';
export * from './subscriptions/find-subscription';
export { isEndedStripeStatus, saveStripeSubscription } from './subscriptions/save-stripe-subscription';
export * from './subscriptions/sync-revenuecat-subscriber';
export * from './support/find-balance-series';
export * from './support/find-support-matches';
export * from './support/find-user-support-view';
export type * from './support/user-support-view';
export * from './topups/auto-topup-top-ups';
export * from './topups/confirm-topup';
export * from './topups/create-topup';
export * from './unit-of-work/app-webhook-outbox';
export * from './unit-of-work/unit-of-work';
export * from './users/link-user-ids';
export * from './users/lock-user';
