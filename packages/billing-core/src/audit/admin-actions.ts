/**
 * The names of operators' state-changing actions, as `admin_audit.action` records them, whichever
 * surface ran them (the admin API, the console, the queue dashboard, the CLI). An HTTP action that
 * has no name here is still audited, under its method and route pattern.
 */
export const adminActions = {
  inboxRequeue: 'inbox.requeue',
  inboxRequeueByFilter: 'inbox.requeue_by_filter',
  inboxReplay: 'inbox.replay',
  inboxReplayByFilter: 'inbox.replay_by_filter',
  appWebhookRedeliver: 'app_webhook.redeliver',
  reconcileStripe: 'reconcile.stripe',
  reconcileApple: 'reconcile.apple',
  queueRetryJob: 'queue.retry_job',
  queueRetryAll: 'queue.retry_all',
  userGrant: 'user.grant',
  lotVoid: 'lot.void',
  holdRelease: 'hold.release',
  debtForgive: 'debt.forgive',
  spendLimitsSet: 'spend_limits.set',
  autoTopupDisable: 'auto_topup.disable',
} as const;

export type AdminActionName = (typeof adminActions)[keyof typeof adminActions];
