import type { AppleNotificationSettings } from './verify-apple-notification';
import { readAppleRootCertificates } from './verify-apple-notification';

/**
 * The App Store notification settings of ingest's configuration, or undefined while any of the
 * three is unset (the store is off; production refuses half of them at parse, see
 * appleConfigurationProblems). Reads the root certificates: a bad path throws at start.
 */
export function appleNotificationSettingsOf(config: {
  APPLE_ROOT_CERTIFICATES: readonly string[];
  APPLE_BUNDLE_ID?: string | undefined;
  APPLE_APP_APPLE_ID?: number | undefined;
}): AppleNotificationSettings | undefined {
  const { APPLE_ROOT_CERTIFICATES: paths, APPLE_BUNDLE_ID: bundleId, APPLE_APP_APPLE_ID: appAppleId } = config;
  if (paths.length === 0 || bundleId === undefined || appAppleId === undefined) return undefined;
  return { rootCertificates: readAppleRootCertificates(paths), bundleId, appAppleId };
}
