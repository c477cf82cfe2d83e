import { parseEnv } from '@tally/platform';
import { workerEnvSchema } from './config';
import { unverifiedPacksWarning, workerProviderSwitches } from './provider-switches';

const configOf = (env: Record<string, string>) =>
  parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env });
const revenueCatLine = (env: Record<string, string>) =>
  workerProviderSwitches(configOf(env)).find((entry) => entry.name === 'revenuecat');

describe("the worker's start-up line about RevenueCat says what will happen to packs", () => {
  it('verification off (the demo), no key: packs credit from the body, subscription events park', () => {
    const config = configOf({ REVENUECAT_VERIFY_PURCHASES: 'false' });
    expect(revenueCatLine({ REVENUECAT_VERIFY_PURCHASES: 'false' })).toEqual({
      name: 'revenuecat',
      on: false,
      whenOff:
        'subscription events park as not_configured (set REVENUECAT_API_KEY); token packs credit from the webhook body, unverified (REVENUECAT_VERIFY_PURCHASES=false)',
    });
    expect(unverifiedPacksWarning(config)).toBeUndefined();
  });

  it('verification on (the default), no key: packs park as not_configured with subscription events', () => {
    expect(revenueCatLine({})).toEqual({
      name: 'revenuecat',
      on: false,
      whenOff:
        'subscription events and token packs (verified by its REST read) park as not_configured (set REVENUECAT_API_KEY)',
    });
    expect(unverifiedPacksWarning(configOf({}))).toBeUndefined();
  });

  it('a key with verification off: on, and a warning that packs are not verified', () => {
    const env = { REVENUECAT_API_KEY: 'sk_unit', REVENUECAT_VERIFY_PURCHASES: 'false' };
    expect(revenueCatLine(env)).toMatchObject({ name: 'revenuecat', on: true });
    expect(unverifiedPacksWarning(configOf(env))).toBe(
      'REVENUECAT_VERIFY_PURCHASES=false: RevenueCat token packs credit from the webhook body without the REST read',
    );
    expect(unverifiedPacksWarning(configOf({ REVENUECAT_API_KEY: 'sk_unit' }))).toBeUndefined();
  });

  it('names every provider the worker can run without, in the order of the log line', () => {
    expect(workerProviderSwitches(configOf({})).map((entry) => [entry.name, entry.on])).toEqual([
      ['stripe', false],
      ['revenuecat', false],
      ['google_play', false],
      ['ai_studio', false],
      ['app_store_api', false],
      ['smtp', false],
      ['app_webhooks', false],
    ]);
  });
});
