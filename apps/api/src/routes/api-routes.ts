import type { Route } from '../http/define-route';
import { appWebhookRoutes } from './admin/app-webhook-routes';
import { auditRoutes } from './admin/audit-routes';
import { autoTopupAdminRoutes } from './admin/auto-topup-routes';
import { debtAdminRoutes } from './admin/debt-routes';
import { eventRoutes } from './admin/event-routes';
import { holdAdminRoutes } from './admin/hold-routes';
import { ledgerAdminRoutes } from './admin/ledger-routes';
import { limitAdminRoutes } from './admin/limit-routes';
import { lotAdminRoutes } from './admin/lot-routes';
import { reconcileRoutes } from './admin/reconcile-routes';
import { usageAdminRoutes } from './admin/usage-routes';
import { userSupportRoutes } from './admin/user-support-routes';
import { autoTopupRoutes } from './v1/auto-topup-routes';
import { grantRoutes } from './v1/grant-routes';
import { limitRoutes } from './v1/limit-routes';
import { spendingRoutes } from './v1/spending-routes';
import { storeRoutes } from './v1/store-routes';
import { studioRoutes } from './v1/studio-routes';
import { subscriptionRoutes } from './v1/subscription-routes';
import { topupRoutes } from './v1/topup-routes';
import { usageRoutes } from './v1/usage-routes';
import { walletRoutes } from './v1/wallet-routes';

/**
 * Every JSON route of the product API, `/v1/users/{userId}/…` (app keys): the one list the router
 * (createApiApp) and the OpenAPI document (`GET /openapi.json`) are made from. A new route is a
 * `defineRoute` in its module under routes/v1, added here.
 */
export const userRoutes: readonly Route[] = [
  ...walletRoutes,
  ...subscriptionRoutes,
  ...studioRoutes,
  ...topupRoutes,
  ...grantRoutes,
  ...spendingRoutes,
  ...usageRoutes,
  ...limitRoutes,
  ...autoTopupRoutes,
  ...storeRoutes,
];

/** Every JSON route of the operator API, `/admin/…` (admin keys, every POST audited): as userRoutes. */
export const adminRoutes: readonly Route[] = [
  ...auditRoutes,
  ...eventRoutes,
  ...ledgerAdminRoutes,
  ...userSupportRoutes,
  ...lotAdminRoutes,
  ...debtAdminRoutes,
  ...holdAdminRoutes,
  ...limitAdminRoutes,
  ...autoTopupAdminRoutes,
  ...reconcileRoutes,
  ...appWebhookRoutes,
  ...usageAdminRoutes,
];

/** Both lists, in the document's order. */
export const apiRoutes: readonly Route[] = [...userRoutes, ...adminRoutes];
