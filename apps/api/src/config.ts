import { defaultPaymentEnvironments, paymentEnvironments } from '@tally/billing-core';
import {
  appleApiSettings,
  appleWebhookSettings,
  appWebhookUrlSetting,
  baseEnvSchema,
  debtPolicySetting,
  hostSetting,
  nodeEnvSetting,
  nonEmptyCsvList,
  paymentEnvironmentsSetting,
  port,
  positiveInt,
  providerApiSettings,
  refuseDemoConfigurationInProduction,
  serviceHostSetting,
  spendLimitSetting,
  walletLowBalanceThresholdSetting,
} from '@tally/platform';
import { z } from 'zod';

export const apiEnvSchema = baseEnvSchema
  .extend({
    NODE_ENV: nodeEnvSetting,
    API_PORT: port(3001),
    HOST: hostSetting,
    API_HOST: serviceHostSetting,
    APP_API_KEYS: nonEmptyCsvList('app API key'),
    ADMIN_API_KEYS: nonEmptyCsvList('admin API key'),
    /** On-demand subscription sync: which environments' subscriptions count, and RevenueCat REST v1. */
    PAYMENT_ENVIRONMENTS: paymentEnvironmentsSetting(paymentEnvironments, defaultPaymentEnvironments),
    ...providerApiSettings,
    /**
     * Apple reconciliation (`POST /admin/reconcile/apple`): the App Store Server API and the same
     * notification check as ingest's; without both the route answers 503 not_configured.
     */
    ...appleApiSettings,
    ...appleWebhookSettings,
    /**
     * Idempotency-Key (docs/idempotency.md): a key whose attempt has run this long without an
     * answer is taken over by its retry (the attempt died). Must exceed the provider timeouts, or
     * a retry could resume a request still waiting on Stripe or RevenueCat.
     */
    IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: positiveInt(60_000),
    /**
     * A /v1 call not answered within this is answered 503 database_unavailable (docs/configuration.md
     * "Timeouts"); the subscription sync and the top-ups, which wait on a provider, stop it once
     * their user is resolved.
     */
    API_ANSWER_DEADLINE_MS: positiveInt(5_000),
    /** A hold's life when `POST /v1/users/{userId}/holds` names no expiresInSeconds (docs/holds.md): 1..86400. */
    /** Debits in one shared transaction at most (docs/configuration.md; 1: every debit alone). */
    SPEND_BATCH_MAX_DEBITS: positiveInt(32),
    /** Debit transactions open at once; debits arriving while all are open wait and go together. */
    SPEND_BATCH_TRANSACTIONS: positiveInt(2),
    HOLD_DEFAULT_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
    /** The spend limits of a user without their own (docs/spend-limits.md): tokens per UTC day and calendar month; unset, none. */
    SPEND_LIMIT_DAILY: spendLimitSetting,
    SPEND_LIMIT_MONTHLY: spendLimitSetting,
    /**
     * Requests that sent a wrong key (`/v1`, `/admin`, the dashboard, the console) per client IP
     * and window before further ones answer 429 (0 = off); requests with a valid key, or with
     * none (the 401 challenge), are never counted or limited.
     */
    API_FAILED_AUTH_LIMIT: z.coerce.number().int().min(0).default(30),
    API_FAILED_AUTH_WINDOW_MS: positiveInt(60_000),
    /** The api posts ledger entries too (studio debits, top-ups): docs/app-webhooks.md. */
    WALLET_LOW_BALANCE_THRESHOLD: walletLowBalanceThresholdSetting,
    DEBT_POLICY: debtPolicySetting,
    /**
     * Set (as on the workers): the messages the api writes are handed to the app-webhooks queue
     * right after their commit. Unset: they wait for the relay (which, without it, is off).
     */
    APP_WEBHOOK_URL: appWebhookUrlSetting,
  })
  // A key in both lists would let whoever holds that app key (a mobile or web client) reach /admin
  // and the queue dashboard. Which key is not said: the message must not print a secret.
  .superRefine((config, ctx) => {
    refuseDemoConfigurationInProduction(config, ctx);
    const appKeys = new Set(config.APP_API_KEYS);
    const shared = config.ADMIN_API_KEYS.filter((key) => appKeys.has(key)).length;
    if (shared > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_API_KEYS'],
        message: `${shared} key(s) also in APP_API_KEYS; an admin key must never be an app key (an app could reach /admin)`,
      });
    }
    const providerTimeoutMs = Math.max(config.STRIPE_TIMEOUT_MS, config.REVENUECAT_API_TIMEOUT_MS);
    if (config.IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS <= providerTimeoutMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS'],
        message: `must exceed STRIPE_TIMEOUT_MS and REVENUECAT_API_TIMEOUT_MS (${providerTimeoutMs}), or a retry could run a request that is still waiting on a provider`,
      });
    }
  });

export type ApiConfig = z.output<typeof apiEnvSchema>;
