import { z } from 'zod';
import { appleConfigurationProblems, appleReconcileSettings } from './apple-settings';
import { demoConfigurationProblems } from './production-configuration';

const webhook = {
  APPLE_ROOT_CERTIFICATES: ['/etc/apple/AppleRootCA-G3.cer'],
  APPLE_BUNDLE_ID: 'com.example',
  APPLE_APP_APPLE_ID: 42,
};
const api = {
  APPLE_KEY_ID: 'ABC123',
  APPLE_ISSUER_ID: 'issuer',
  APPLE_PRIVATE_KEY_PATH: '/etc/apple/key.p8',
  APPLE_BUNDLE_ID: 'com.example',
};

describe('half an Apple configuration', () => {
  it('accepts none or all of each part', () => {
    expect(appleConfigurationProblems({ APPLE_ROOT_CERTIFICATES: [] })).toEqual([]);
    expect(appleConfigurationProblems(webhook)).toEqual([]);
    expect(appleConfigurationProblems(api)).toEqual([]);
    // The worker reads the bundle id without the webhook part: that is not half of it.
    expect(appleConfigurationProblems({ APPLE_BUNDLE_ID: 'com.example' })).toEqual([]);
  });

  it('names each variable missing from a part that is half set', () => {
    const variables = (config: Record<string, unknown>) => appleConfigurationProblems(config).map((p) => p.variable);
    expect(variables({ ...webhook, APPLE_APP_APPLE_ID: undefined })).toEqual(['APPLE_APP_APPLE_ID']);
    expect(variables({ APPLE_ROOT_CERTIFICATES: [], APPLE_BUNDLE_ID: 'com.example' })).toEqual([
      'APPLE_ROOT_CERTIFICATES',
      'APPLE_APP_APPLE_ID',
    ]);
    expect(variables({ APPLE_KEY_ID: 'ABC123' })).toEqual(['APPLE_ISSUER_ID', 'APPLE_PRIVATE_KEY_PATH']);
    expect(variables({ ...api, APPLE_BUNDLE_ID: undefined })).toEqual(['APPLE_BUNDLE_ID']);
  });

  it('is refused only under NODE_ENV=production', () => {
    const half = { APPLE_KEY_ID: 'ABC123', APPLE_ROOT_CERTIFICATES: ['/root.cer'] };
    expect(demoConfigurationProblems(half)).toEqual([]);
    expect(
      demoConfigurationProblems({ ...half, NODE_ENV: 'production' })
        .map((p) => p.variable)
        .sort(),
    ).toEqual(['APPLE_APP_APPLE_ID', 'APPLE_BUNDLE_ID', 'APPLE_ISSUER_ID', 'APPLE_PRIVATE_KEY_PATH'].sort());
    expect(demoConfigurationProblems({ ...webhook, ...api, NODE_ENV: 'production' })).toEqual([]);
  });
});

describe('Apple reconciliation settings', () => {
  const schema = z.object(appleReconcileSettings({ defaultWindowDays: 3, maxWindowDays: 180 }));

  it('defaults to an hourly pass over three days', () => {
    expect(schema.parse({})).toEqual({ APPLE_RECONCILE_INTERVAL_MS: 3_600_000, APPLE_RECONCILE_WINDOW_DAYS: 3 });
    expect(schema.parse({ APPLE_RECONCILE_INTERVAL_MS: '60000', APPLE_RECONCILE_WINDOW_DAYS: '180' })).toEqual({
      APPLE_RECONCILE_INTERVAL_MS: 60_000,
      APPLE_RECONCILE_WINDOW_DAYS: 180,
    });
  });

  it("refuses a window past Apple's history, a zero, a fraction or a word", () => {
    const problems = (env: Record<string, string>) =>
      schema.safeParse(env).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) ?? [];
    expect(problems({ APPLE_RECONCILE_WINDOW_DAYS: '181' })).toEqual([
      "APPLE_RECONCILE_WINDOW_DAYS: at most 180 (Apple's notification history keeps 180 days)",
    ]);
    for (const value of ['0', '1.5', 'three']) {
      expect(problems({ APPLE_RECONCILE_WINDOW_DAYS: value })).toHaveLength(1);
    }
    expect(problems({ APPLE_RECONCILE_INTERVAL_MS: '-1' })).toHaveLength(1);
  });
});
