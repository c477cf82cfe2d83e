export * from './catalog/catalog';
export type { CatalogData, Plan, TokenPack } from './catalog/catalog-schema';
export * from './clock';
export * from './contracts/queues';
export * from './db/create-db';
export * from './db/database-errors';
export * from './db/migrate';
export type {
  DB,
  InboxEventRow,
  InboxStatus,
  LedgerEntryRow,
  Provider,
  SubscriptionHistoryRow,
  SubscriptionRow,
  WalletRow,
} from './db/schema';
export { inboxStatuses } from './db/schema';
export * from './errors';
export * from './inbox/find-oldest-due-age';
export type { InboxEventDraft } from './inbox/inbox-event-draft';
export * from './inbox/inbox-handler';
export * from './inbox/inbox-relay-source';
export * from './inbox/list-inbox-events';
export * from './inbox/process-inbox-event';
export * from './inbox/record-inbox-event';
export * from './inbox/record-inbox-events';
export * from './inbox/replay-inbox-events';
export * from './inbox/requeue-inbox-events';
export { ensureWallet } from './ledger/ensure-wallet';
export * from './ledger/post-ledger-entry';
export * from './ledger/read-wallet';
export * from './ledger/verify-ledger';
export type { AiStudioService } from './ports/ai-studio-service';
export type { Mailer } from './ports/mailer';
export type { ProviderPorts } from './ports/provider-ports';
export type {
  RevenueCatApi,
  RevenueCatSubscriber,
  RevenueCatSubscriberRead,
  RevenueCatSubscription,
} from './ports/revenuecat-api';
export type { StripeApi } from './ports/stripe-api';
export * from './providers/create-inbox-handlers';
export * from './providers/revenuecat/revenuecat-api-client';
export {
  parseRevenueCatWebhook,
  toRevenueCatInboxDraft,
  toRevenueCatInboxDraftFromBody,
} from './providers/revenuecat/revenuecat-event';
export * from './providers/shared/payment-environment';
export { parseStripeEvent, toStripeInboxDraft, toStripeInboxDraftFromBody } from './providers/stripe/stripe-event';
export * from './references';
export * from './relay/durable-row-source';
export * from './scheduling/backoff';
export * from './subscriptions/apply-subscription-state';
export * from './subscriptions/desired-revenuecat-subscription';
export * from './subscriptions/sync-revenuecat-subscriber';
export * from './users/link-user-ids';
export * from './users/lock-user';
