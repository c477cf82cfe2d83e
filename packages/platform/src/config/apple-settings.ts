import { z } from 'zod';
import { csvList, positiveInt } from './env';

/**
 * Apple App Store Server Notifications V2 (ingest, docs/stores-apple.md): without all three the
 * store is off and `POST /webhooks/apple` answers 503 not_configured.
 */
export const appleWebhookSettings = {
  /** Comma-separated paths of DER or PEM root certificates (Apple Root CA - G3 in production). */
  APPLE_ROOT_CERTIFICATES: csvList,
  /** The app's bundle id (App Store Connect: App Information, Bundle ID). */
  APPLE_BUNDLE_ID: z.string().trim().min(1).optional(),
  /** The app's Apple ID (App Store Connect: App Information, Apple ID), a number. */
  APPLE_APP_APPLE_ID: z.coerce.number().int().positive().optional(),
};

/**
 * The App Store Server API (the worker: consumption information, subscription re-reads): a JWT
 * signed with the In-App Purchase key. Without the three the events that need it park as
 * not_configured and consumption requests wait.
 */
export const appleApiSettings = {
  APPLE_BUNDLE_ID: appleWebhookSettings.APPLE_BUNDLE_ID,
  /** App Store Connect: Users and Access, Integrations, In-App Purchase: the key's Key ID. */
  APPLE_KEY_ID: z.string().trim().min(1).optional(),
  /** The Issuer ID shown above the keys on the same page. */
  APPLE_ISSUER_ID: z.string().trim().min(1).optional(),
  /** Path of the downloaded `.p8` private key (PKCS#8 PEM, EC P-256). */
  APPLE_PRIVATE_KEY_PATH: z.string().trim().min(1).optional(),
  /**
   * Overrides Apple's origins (https://api.storekit.itunes.apple.com for production,
   * https://api.storekit-sandbox.itunes.apple.com for sandbox): a local fake in tests.
   */
  APPLE_API_BASE_URL: z.url({ message: 'must be a URL such as https://api.storekit.itunes.apple.com' }).optional(),
  APPLE_API_TIMEOUT_MS: positiveInt(10_000),
};

/**
 * Apple reconciliation's schedule (the worker's opt-in role `apple-reconcile`, docs/stores-apple.md):
 * how often a pass reads Apple's notification history and over how many days. The limits are
 * Apple's, and billing-core's to know, so the caller passes them (as paymentEnvironmentsSetting's).
 */
export function appleReconcileSettings(limits: { defaultWindowDays: number; maxWindowDays: number }) {
  return {
    /** The period of a pass (default an hour). */
    APPLE_RECONCILE_INTERVAL_MS: positiveInt(3600_000),
    /** The days each pass reads back, at most `maxWindowDays` (Apple keeps 180 days of history). */
    APPLE_RECONCILE_WINDOW_DAYS: positiveInt(limits.defaultWindowDays).refine((days) => days <= limits.maxWindowDays, {
      message: `at most ${limits.maxWindowDays} (Apple's notification history keeps ${limits.maxWindowDays} days)`,
    }),
  };
}

const webhookPart = ['APPLE_ROOT_CERTIFICATES', 'APPLE_BUNDLE_ID', 'APPLE_APP_APPLE_ID'] as const;
const apiPart = ['APPLE_KEY_ID', 'APPLE_ISSUER_ID', 'APPLE_PRIVATE_KEY_PATH'] as const;

function isSet(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null && value !== '';
}

/**
 * Half an Apple configuration (production refuses it; elsewhere the store is just off): of the
 * webhook part (a process that reads APPLE_ROOT_CERTIFICATES: ingest) some set but not all, or of
 * the API part some set but not all, or the API part without APPLE_BUNDLE_ID (the JWT's `bid`).
 * Names the variables missing, never a value.
 */
export function appleConfigurationProblems(config: Record<string, unknown>): { variable: string; message: string }[] {
  // A ConfigurationProblem (production-configuration.ts, which calls this: not imported, no cycle).
  const problems: { variable: string; message: string }[] = [];
  // guard: apple-half-configuration
  if ('APPLE_ROOT_CERTIFICATES' in config) {
    const missing = webhookPart.filter((variable) => !isSet(config[variable]));
    if (missing.length > 0 && missing.length < webhookPart.length) {
      for (const variable of missing) {
        problems.push({
          variable,
          message: `Apple notifications need ${webhookPart.join(', ')} together; set it or unset the others`,
        });
      }
    }
  }
  const apiMissing = apiPart.filter((variable) => !isSet(config[variable]));
  if (apiMissing.length > 0 && apiMissing.length < apiPart.length) {
    for (const variable of apiMissing) {
      problems.push({
        variable,
        message: `the App Store Server API needs ${apiPart.join(', ')} together; set it or unset the others`,
      });
    }
  }
  if (apiMissing.length === 0 && !isSet(config.APPLE_BUNDLE_ID)) {
    problems.push({
      variable: 'APPLE_BUNDLE_ID',
      message: 'the App Store Server API needs the bundle id (the JWT bid)',
    });
  }
  return problems;
}
