import { z } from 'zod';
import { positiveInt } from './env';
import type { ConfigurationProblem } from './production-configuration';

/**
 * Google Play's settings (docs/stores-google-play.md), each off until configured. An empty value
 * reads as unset, as the demo's `.env` leaves them.
 */
const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value === '' ? undefined : value));

/** The app's package name as the Play Console shows it (`com.example.app`). */
const packageName = optionalText.pipe(
  z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/, {
      message: 'must be an Android package name such as com.example.app',
    })
    .optional(),
);

/** Ingest's: what verifies a Pub/Sub push and the package its notifications must name. */
export const googlePlayPushSettings = {
  GOOGLE_PLAY_PACKAGE_NAME: packageName,
  /** The push subscription's audience (Pub/Sub: Enable authentication, Audience). */
  GOOGLE_PUBSUB_AUDIENCE: optionalText,
  /** The service account the push subscription signs its tokens as (its email). */
  GOOGLE_PUBSUB_SERVICE_ACCOUNT: optionalText.pipe(z.email({ message: 'must be a service account email' }).optional()),
  /** Google's OIDC certificates as a PEM map by key id (google-auth-library's format in Node). */
  GOOGLE_OIDC_CERTS_URL: z.url().default('https://www.googleapis.com/oauth2/v1/certs'),
};

/** The worker's: the Play Developer API, as the service account of the key file. */
export const googlePlayApiSettings = {
  GOOGLE_PLAY_PACKAGE_NAME: packageName,
  /** The service account's JSON key file (Google Cloud console, IAM, Service accounts, Keys). */
  GOOGLE_SERVICE_ACCOUNT_KEY_PATH: optionalText,
  GOOGLE_OAUTH_TOKEN_URL: z.url().default('https://oauth2.googleapis.com/token'),
  GOOGLE_PLAY_API_BASE_URL: z.url().default('https://androidpublisher.googleapis.com'),
  GOOGLE_PLAY_API_TIMEOUT_MS: positiveInt(10_000),
};

/** What turns Google Play on in ingest: all three, or none. */
export const googlePlayPushVariables = [
  'GOOGLE_PLAY_PACKAGE_NAME',
  'GOOGLE_PUBSUB_AUDIENCE',
  'GOOGLE_PUBSUB_SERVICE_ACCOUNT',
] as const;
/** What turns Google Play on in the worker: both, or neither. */
export const googlePlayApiVariables = ['GOOGLE_PLAY_PACKAGE_NAME', 'GOOGLE_SERVICE_ACCOUNT_KEY_PATH'] as const;

/** The variables of a group that are set (a group is on when all are). */
export function setVariables(config: Record<string, unknown>, variables: readonly string[]): string[] {
  return variables.filter((variable) => config[variable] !== undefined);
}

/**
 * Half a Google Play configuration: some of the group set and not all. Outside production the
 * store simply stays off (and the process says so at start); in production it stops the start,
 * naming each missing variable, so a forgotten one never leaves Google's notifications unanswered
 * (Pub/Sub gives up after seven days) while the operator believes the store is on.
 */
export function halfGooglePlayConfigurationProblems(
  config: Record<string, unknown>,
  variables: readonly string[],
): ConfigurationProblem[] {
  if (config.NODE_ENV !== 'production') return [];
  const set = setVariables(config, variables);
  // guard: google-play-half-configuration
  if (set.length === 0 || set.length === variables.length) return [];
  return variables
    .filter((variable) => !set.includes(variable))
    .map((variable) => ({
      variable,
      message: `Google Play is half configured (${set.join(', ')} set): set ${variables.join(', ')} together, or none`,
    }));
}

/** `superRefine` for an app's schema: half a Google Play configuration is an issue in production (exit 1). */
export function refuseHalfGooglePlayConfiguration(variables: readonly string[]) {
  return (config: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const problem of halfGooglePlayConfigurationProblems(config, variables)) {
      ctx.addIssue({ code: 'custom', path: [problem.variable], message: problem.message });
    }
  };
}
