import {
  APPLE_RECONCILE_MAX_WINDOW_DAYS,
  DEFAULT_APPLE_RECONCILE_WINDOW_DAYS,
  DEFAULT_RECONCILE_WINDOW_DAYS,
  defaultPaymentEnvironments,
  paymentEnvironments,
  STRIPE_EVENTS_MAX_WINDOW_DAYS,
} from '@tally/billing-core';
import {
  appleApiSettings,
  appleReconcileSettings,
  appleWebhookSettings,
  appWebhookUrlSetting,
  baseEnvSchema,
  booleanFlag,
  csvList,
  debtPolicySetting,
  googlePlayApiSettings,
  googlePlayApiVariables,
  hostSetting,
  nodeEnvSetting,
  paymentEnvironmentsSetting,
  port,
  positiveInt,
  providerApiSettings,
  refuseDemoConfigurationInProduction,
  refuseHalfGooglePlayConfiguration,
  serviceHostSetting,
  walletLowBalanceThresholdSetting,
} from '@tally/platform';
import { z } from 'zod';
import { type WorkerRole, workerRoleTable } from './roles/role-table';

export type { WorkerRole };

/**
 * What a worker process runs, from the role table. Operators scale the inbox consumer apart from
 * the scheduled loops by giving deployments different roles; every role is safe to run on any
 * number of replicas.
 */
export const workerRoles = Object.keys(workerRoleTable) as readonly WorkerRole[];
/** Roles that run only when listed by name: `all` (and the default) leaves them out. */
export const optInWorkerRoles: readonly WorkerRole[] = workerRoles.filter(
  (role) => workerRoleTable[role].optIn === true,
);

const roleNames: readonly string[] = ['all', ...workerRoles];

/**
 * `WORKER_ROLES`: unset or empty means `all`; `all` stands for every role but the opt-in ones,
 * which run only when named (e.g. `all,reconcile`). Every name is checked, also next to `all`.
 */
export const workerRolesSetting = csvList
  .superRefine((list, ctx) => {
    for (const name of list) {
      if (!roleNames.includes(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown role "${name}"; each role is one of: ${roleNames.join(', ')}`,
        });
      }
    }
  })
  .transform((list): WorkerRole[] => {
    const named = workerRoles.filter((role) => list.includes(role));
    if (list.length > 0 && !list.includes('all')) return named;
    return workerRoles.filter((role) => !optInWorkerRoles.includes(role) || named.includes(role));
  });

export const workerEnvSchema = baseEnvSchema
  .extend({
    NODE_ENV: nodeEnvSetting,
    WORKER_METRICS_PORT: port(9464),
    HOST: hostSetting,
    WORKER_METRICS_HOST: serviceHostSetting,
    /** Comma-separated roles (default all, which leaves out the opt-in roles). */
    WORKER_ROLES: workerRolesSetting,
    /** Inbox jobs one worker process runs at once; events of one user still apply one at a time. */
    WORKER_CONCURRENCY: positiveInt(128),
    /** Inbox first runs sharing one transaction at most (1: each alone); see docs/engine.md. */
    INBOX_BATCH_MAX_EVENTS: positiveInt(32),
    /** Inbox transactions a worker process keeps open at once; jobs beyond wait and share the next. */
    INBOX_BATCH_TRANSACTIONS: positiveInt(4),
    /** A dead worker's jobs wait this long before another replica takes them (BullMQ lock). */
    WORKER_LOCK_DURATION_MS: positiveInt(30_000),
    /** An inbox event is parked (status failed) once this many attempts have started and not succeeded. */
    INBOX_MAX_ATTEMPTS: positiveInt(15),
    INBOX_BACKOFF_BASE_MS: positiveInt(5_000),
    INBOX_BACKOFF_MAX_MS: positiveInt(30 * 60_000),
    INBOX_RETRY_LATER_BASE_MS: positiveInt(10_000),
    INBOX_RETRY_LATER_MAX_DELAY_MS: positiveInt(10 * 60_000),
    INBOX_RETRY_LATER_MAX_WAIT_MS: positiveInt(24 * 3600_000),
    PAYMENT_ENVIRONMENTS: paymentEnvironmentsSetting(paymentEnvironments, defaultPaymentEnvironments),
    /** Stripe Connect accounts whose events Tally applies; events of other accounts are ignored. */
    STRIPE_CONNECT_ACCOUNTS: csvList,
    RELAY_INTERVAL_MS: positiveInt(15_000),
    RELAY_STALE_AFTER_MS: positiveInt(60_000),
    RELAY_PROCESSING_STALE_AFTER_MS: positiveInt(5 * 60_000),
    RELAY_BATCH_SIZE: positiveInt(500),
    /** RevenueCat REST v1 and the Stripe API: without a key, the events that need it park as not_configured. */
    ...providerApiSettings,
    /**
     * Token packs (NON_RENEWING_PURCHASE) credit only once RevenueCat's REST read lists the purchase
     * (needs REVENUECAT_API_KEY). `false` credits from the webhook body alone: the local demo only.
     */
    REVENUECAT_VERIFY_PURCHASES: booleanFlag(true),
    /** AI Studio (docs/studio.md). Without AI_STUDIO_BASE_URL, generations fail as not_configured and are refunded. */
    AI_STUDIO_BASE_URL: z.url({ message: 'must be a URL such as https://ai.example.com' }).optional(),
    AI_STUDIO_API_KEY: z.string().min(1).optional(),
    AI_STUDIO_TIMEOUT_MS: positiveInt(120_000),
    STUDIO_CONCURRENCY: positiveInt(4),
    /** Attempts while the AI service is unreachable (nothing sent) before the request fails and is refunded. */
    STUDIO_MAX_ATTEMPTS: positiveInt(5),
    /** Delay before the next attempt while the AI service is unreachable; doubles up to the max. */
    STUDIO_BACKOFF_BASE_MS: positiveInt(2_000),
    STUDIO_BACKOFF_MAX_MS: positiveInt(60_000),
    STUDIO_SWEEP_INTERVAL_MS: positiveInt(30_000),
    /** A request processing this long is failed and refunded by the sweeper; must exceed AI_STUDIO_TIMEOUT_MS. */
    STUDIO_STUCK_AFTER_MS: positiveInt(5 * 60_000),
    INSTALLMENTS_INTERVAL_MS: positiveInt(60_000),
    INSTALLMENTS_PROCESSING_STALE_AFTER_MS: positiveInt(5 * 60_000),
    INSTALLMENTS_MAX_ATTEMPTS: positiveInt(10),
    /** Installments one claim takes (the loop claims again while a batch comes back full). */
    INSTALLMENTS_BATCH_SIZE: positiveInt(100),
    /** How often the auto top-up loop looks for attempts to charge (role auto-topup, docs/auto-topup.md). */
    AUTO_TOPUP_INTERVAL_MS: positiveInt(1_000),
    /** Attempts one claim takes (the loop claims again while a batch comes back full). */
    AUTO_TOPUP_BATCH_SIZE: positiveInt(20),
    /** A claimed attempt is not claimed again for this long: must exceed STRIPE_TIMEOUT_MS (a dead worker's attempt resumes after it). */
    AUTO_TOPUP_LEASE_MS: positiveInt(60_000),
    /** Delay before asking Stripe again (same idempotency key) after a timeout or 5xx; doubles up to the max. */
    AUTO_TOPUP_BACKOFF_BASE_MS: positiveInt(5_000),
    AUTO_TOPUP_BACKOFF_MAX_MS: positiveInt(300_000),
    /** An unanswered charge is asked again with its key for this long after the first call (Stripe keeps keys 24 h). */
    AUTO_TOPUP_RESOLVE_WITHIN_HOURS: positiveInt(23),
    /** The App Store Server API (docs/stores-apple.md): all three of key id, issuer id and key path, or off. */
    ...appleApiSettings,
    /**
     * The notification check (APPLE_ROOT_CERTIFICATES, APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID), the
     * same as ingest's: Apple reconciliation verifies what Apple's history lists with it.
     */
    ...appleWebhookSettings,
    /** How often the apple-consumption loop looks for consumption requests to answer (docs/stores-apple.md). */
    APPLE_CONSUMPTION_INTERVAL_MS: positiveInt(1_000),
    /** Requests one claim takes (the loop claims again while a batch comes back full). */
    APPLE_CONSUMPTION_BATCH_SIZE: positiveInt(20),
    /** A claimed request is not claimed again for this long: must exceed APPLE_API_TIMEOUT_MS. */
    APPLE_CONSUMPTION_LEASE_MS: positiveInt(60_000),
    /** Delay before asking Apple again after a 429, 5xx or timeout; doubles up to the max. */
    APPLE_CONSUMPTION_BACKOFF_BASE_MS: positiveInt(5_000),
    APPLE_CONSUMPTION_BACKOFF_MAX_MS: positiveInt(600_000),
    /** The Play Developer API (docs/stores-google-play.md): off until GOOGLE_PLAY_PACKAGE_NAME and the key file are set. */
    ...googlePlayApiSettings,
    /** How often the google-play-consume loop consumes delivered purchases (Google refunds unconsumed ones at three days). */
    GOOGLE_PLAY_CONSUME_INTERVAL_MS: positiveInt(5_000),
    GOOGLE_PLAY_CONSUME_BATCH_SIZE: positiveInt(20),
    /** A claimed consume is not claimed again for this long: must exceed GOOGLE_PLAY_API_TIMEOUT_MS. */
    GOOGLE_PLAY_CONSUME_LEASE_MS: positiveInt(60_000),
    /** Delay before asking Google again after a failed consume; doubles up to the max. */
    GOOGLE_PLAY_CONSUME_BACKOFF_BASE_MS: positiveInt(10_000),
    GOOGLE_PLAY_CONSUME_BACKOFF_MAX_MS: positiveInt(15 * 60_000),
    /** The period of the pass over the Voided Purchases API (role google-play-voided; default daily). */
    GOOGLE_PLAY_VOIDED_PASS_INTERVAL_MS: positiveInt(24 * 3600_000),
    /** The credit expiry sweeper's period (role credit-expiry, docs/lots.md). */
    CREDIT_EXPIRY_INTERVAL_MS: positiveInt(60_000),
    /** wallet.credits_expiring is written this many hours before a lot expires. */
    CREDIT_EXPIRY_NOTICE_HOURS: positiveInt(72),
    /** Wallets one expiry (or notice) transaction claims; a sweep claims again while a batch comes back full. */
    CREDIT_EXPIRY_BATCH_SIZE: positiveInt(100),
    SMTP_URL: z.string().min(1).optional(),
    EMAIL_FROM: z.string().min(3).default('Tally <billing@tally.local>'),
    /** Confirmation emails one worker process sends at once (role email). */
    EMAIL_CONCURRENCY: positiveInt(8),
    EMAIL_MAX_ATTEMPTS: positiveInt(10),
    EMAIL_BACKOFF_BASE_MS: positiveInt(30_000),
    EMAIL_BACKOFF_MAX_MS: positiveInt(3600_000),
    // Outbound webhooks to the app (docs/app-webhooks.md, role 'app-webhooks'). Messages are written
    // whether or not APP_WEBHOOK_URL is set; they are delivered (and relayed) only when it is.
    APP_WEBHOOK_URL: appWebhookUrlSetting,
    /** Comma-separated `whsec_…` secrets; each signs every delivery (rotation). Required with APP_WEBHOOK_URL. */
    APP_WEBHOOK_SECRETS: csvList.pipe(
      z.array(z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, { message: 'each secret is whsec_ and base64' })),
    ),
    APP_WEBHOOK_TIMEOUT_MS: positiveInt(15_000),
    /** The wait after each failed attempt (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); then the message is failed. */
    APP_WEBHOOK_RETRY_SCHEDULE_MS: z
      .string()
      .default('5000,300000,1800000,7200000,18000000,36000000,36000000')
      .transform((value) => value.split(',').map((item) => item.trim()))
      .pipe(
        z
          .array(z.string().regex(/^[1-9][0-9]{0,9}$/, { message: 'each delay is a positive number of milliseconds' }))
          .min(1)
          .transform((delays) => delays.map(Number)),
      ),
    /** Consumer concurrency; one user's messages still go one at a time, in order. */
    APP_WEBHOOK_CONCURRENCY: positiveInt(8),
    /** Delivered messages are deleted this long after delivery (role 'retention'). */
    APP_WEBHOOK_RETENTION_DAYS: positiveInt(30),
    WALLET_LOW_BALANCE_THRESHOLD: walletLowBalanceThresholdSetting,
    DEBT_POLICY: debtPolicySetting,
    // Operations (docs/operations.md): raw-body retention (role 'retention') and Stripe reconciliation
    // (role 'reconcile', opt-in: it runs only when WORKER_ROLES names it).
    INBOX_RAW_BODY_RETENTION_DAYS: positiveInt(90),
    /** The product API's idempotency keys are kept this long, then deleted (docs/idempotency.md). */
    IDEMPOTENCY_KEY_TTL_HOURS: positiveInt(24),
    RETENTION_INTERVAL_MS: positiveInt(3600_000),
    RECONCILE_INTERVAL_MS: positiveInt(3600_000),
    RECONCILE_WINDOW_DAYS: positiveInt(DEFAULT_RECONCILE_WINDOW_DAYS).refine(
      (days) => days <= STRIPE_EVENTS_MAX_WINDOW_DAYS,
      {
        message: "at most 30 (Stripe's Events API keeps 30 days)",
      },
    ),
    // Apple reconciliation (role 'apple-reconcile', opt-in; docs/stores-apple.md).
    ...appleReconcileSettings({
      defaultWindowDays: DEFAULT_APPLE_RECONCILE_WINDOW_DAYS,
      maxWindowDays: APPLE_RECONCILE_MAX_WINDOW_DAYS,
    }),
  })
  // NODE_ENV=production: the demo's switches (body-only packs, sandbox payments) stop the start.
  .superRefine(refuseDemoConfigurationInProduction)
  .superRefine(refuseHalfGooglePlayConfiguration(googlePlayApiVariables));

export type WorkerConfig = z.output<typeof workerEnvSchema>;

/**
 * The most database connections one worker process opens: one per inbox job, studio job and app
 * webhook delivery it may run at once, and 4 for its loops. docs/scaling.md's connection budget
 * and the bench's capacity model (bench/lib/capacity-model.mjs) take it from here.
 */
export function workerPoolSize(
  config: Pick<WorkerConfig, 'WORKER_CONCURRENCY' | 'STUDIO_CONCURRENCY' | 'APP_WEBHOOK_CONCURRENCY'>,
): number {
  return config.WORKER_CONCURRENCY + config.STUDIO_CONCURRENCY + config.APP_WEBHOOK_CONCURRENCY + 4;
}

/** Cross-field checks of the app webhook settings; returns the problems (empty when valid). */
export function appWebhookConfigProblems(config: WorkerConfig): string[] {
  const problems: string[] = [];
  if (config.APP_WEBHOOK_URL !== undefined && config.APP_WEBHOOK_SECRETS.length === 0) {
    problems.push('APP_WEBHOOK_SECRETS is required when APP_WEBHOOK_URL is set (comma-separated whsec_ secrets)');
  }
  if (config.APP_WEBHOOK_URL !== undefined && config.RELAY_PROCESSING_STALE_AFTER_MS <= config.APP_WEBHOOK_TIMEOUT_MS) {
    problems.push(
      'RELAY_PROCESSING_STALE_AFTER_MS must exceed APP_WEBHOOK_TIMEOUT_MS (or a delivery still waiting for its answer is sent again)',
    );
  }
  return problems;
}

/** Cross-field checks of auto top-up's settings; returns the problems (empty when valid). */
export function autoTopupConfigProblems(config: WorkerConfig): string[] {
  // guard: auto-topup-lease-exceeds-timeout
  if (config.AUTO_TOPUP_LEASE_MS > config.STRIPE_TIMEOUT_MS) return [];
  return [
    'AUTO_TOPUP_LEASE_MS must exceed STRIPE_TIMEOUT_MS (or a charge still waiting for its answer is asked again)',
  ];
}

/** Cross-field checks of the apple-consumption loop's settings; returns the problems (empty when valid). */
export function appleConsumptionConfigProblems(config: WorkerConfig): string[] {
  // guard: apple-consumption-lease-exceeds-timeout
  if (config.APPLE_CONSUMPTION_LEASE_MS > config.APPLE_API_TIMEOUT_MS) return [];
  return [
    'APPLE_CONSUMPTION_LEASE_MS must exceed APPLE_API_TIMEOUT_MS (or a request still waiting for its answer is claimed again)',
  ];
}

/** Cross-field checks of Google Play's settings; returns the problems (empty when valid). */
export function googlePlayConfigProblems(config: WorkerConfig): string[] {
  // guard: google-play-lease-exceeds-timeout
  if (config.GOOGLE_PLAY_CONSUME_LEASE_MS > config.GOOGLE_PLAY_API_TIMEOUT_MS) return [];
  return [
    'GOOGLE_PLAY_CONSUME_LEASE_MS must exceed GOOGLE_PLAY_API_TIMEOUT_MS (or a consume still waiting for its answer is asked again)',
  ];
}

/** Cross-field checks of the AI Studio settings; returns the problems (empty when valid). */
export function studioConfigProblems(config: WorkerConfig): string[] {
  const problems: string[] = [];
  if (config.AI_STUDIO_BASE_URL !== undefined && config.AI_STUDIO_API_KEY === undefined) {
    problems.push('AI_STUDIO_API_KEY is required when AI_STUDIO_BASE_URL is set');
  }
  if (config.STUDIO_STUCK_AFTER_MS <= config.AI_STUDIO_TIMEOUT_MS) {
    problems.push(
      'STUDIO_STUCK_AFTER_MS must exceed AI_STUDIO_TIMEOUT_MS (or the sweeper refunds generations that are still running)',
    );
  }
  return problems;
}
