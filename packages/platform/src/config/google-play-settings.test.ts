import { z } from 'zod';
import {
  googlePlayApiSettings,
  googlePlayApiVariables,
  googlePlayPushSettings,
  googlePlayPushVariables,
  halfGooglePlayConfigurationProblems,
  refuseHalfGooglePlayConfiguration,
} from './google-play-settings';

describe("Google Play's settings", () => {
  const push = z.object({ NODE_ENV: z.string().optional(), ...googlePlayPushSettings });
  const api = z.object({ NODE_ENV: z.string().optional(), ...googlePlayApiSettings });
  const full = {
    GOOGLE_PLAY_PACKAGE_NAME: 'com.example.app',
    GOOGLE_PUBSUB_AUDIENCE: 'https://billing.example.com/webhooks/google-play',
    GOOGLE_PUBSUB_SERVICE_ACCOUNT: 'push@example.iam.gserviceaccount.com',
  };

  it('reads empty values as unset, and has the defaults of Google itself', () => {
    expect(push.parse({ GOOGLE_PLAY_PACKAGE_NAME: '', GOOGLE_PUBSUB_AUDIENCE: ' ' })).toEqual({
      GOOGLE_PLAY_PACKAGE_NAME: undefined,
      GOOGLE_PUBSUB_AUDIENCE: undefined,
      GOOGLE_PUBSUB_SERVICE_ACCOUNT: undefined,
      GOOGLE_OIDC_CERTS_URL: 'https://www.googleapis.com/oauth2/v1/certs',
    });
    expect(api.parse({})).toMatchObject({
      GOOGLE_OAUTH_TOKEN_URL: 'https://oauth2.googleapis.com/token',
      GOOGLE_PLAY_API_BASE_URL: 'https://androidpublisher.googleapis.com',
      GOOGLE_PLAY_API_TIMEOUT_MS: 10_000,
    });
  });

  it('refuses a package name and a service account that cannot be what Google shows', () => {
    expect(push.safeParse({ GOOGLE_PLAY_PACKAGE_NAME: 'not a package' }).success).toBe(false);
    expect(push.safeParse({ GOOGLE_PLAY_PACKAGE_NAME: 'single' }).success).toBe(false);
    expect(push.safeParse({ GOOGLE_PUBSUB_SERVICE_ACCOUNT: 'nobody' }).success).toBe(false);
    expect(push.safeParse(full).success).toBe(true);
  });

  it('in production, names each missing variable of half a configuration; none and all are fine', () => {
    const production = (config: Record<string, string>) =>
      halfGooglePlayConfigurationProblems({ NODE_ENV: 'production', ...config }, googlePlayPushVariables);
    expect(production({})).toEqual([]);
    expect(production(full)).toEqual([]);
    const { GOOGLE_PUBSUB_SERVICE_ACCOUNT: _account, ...half } = full;
    expect(production(half).map((problem) => problem.variable)).toEqual(['GOOGLE_PUBSUB_SERVICE_ACCOUNT']);
    expect(
      halfGooglePlayConfigurationProblems(
        { NODE_ENV: 'production', GOOGLE_SERVICE_ACCOUNT_KEY_PATH: '/keys/play.json' },
        googlePlayApiVariables,
      ).map((problem) => problem.variable),
    ).toEqual(['GOOGLE_PLAY_PACKAGE_NAME']);
    // Outside production half a configuration only leaves Google Play off.
    expect(halfGooglePlayConfigurationProblems(half, googlePlayPushVariables)).toEqual([]);
  });

  it('stops a production schema with half a configuration', () => {
    const schema = push.superRefine(refuseHalfGooglePlayConfiguration(googlePlayPushVariables));
    const parsed = schema.safeParse({ NODE_ENV: 'production', GOOGLE_PLAY_PACKAGE_NAME: 'com.example.app' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual([
      'GOOGLE_PUBSUB_AUDIENCE',
      'GOOGLE_PUBSUB_SERVICE_ACCOUNT',
    ]);
  });
});
