import type { DB, SpendLimitDefaults, StripeApi } from '@tally/billing-core';
import type { ProducerQueue } from '@tally/platform';
import type { Kysely } from 'kysely';
import type { AppWebhookActionDeps } from '../routes/admin/app-webhook-actions';
import type { InboxActionDeps } from '../routes/admin/inbox-actions';
import type { LotActionDeps } from '../routes/admin/lot-actions';

/** What the console's pages and actions read and act with. */
export interface ConsoleDeps extends InboxActionDeps, AppWebhookActionDeps, LotActionDeps {
  db: Kysely<DB>;
  stripe?: StripeApi | undefined;
  /** The catalog queues, for the overview's depths (the dashboard's handles). */
  queues: readonly ProducerQueue<unknown>[];
  /** SPEND_LIMIT_DAILY and SPEND_LIMIT_MONTHLY: the user page shows the limits in force. */
  spendLimits: SpendLimitDefaults;
}
