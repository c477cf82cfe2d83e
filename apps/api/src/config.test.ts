import { ConfigError, parseEnv } from '@tally/platform';
import { apiEnvSchema } from './config';

const base = { DATABASE_URL: 'postgres://localhost/tally' };

describe('api configuration', () => {
  it('accepts distinct app and admin key lists', () => {
    const config = parseEnv(apiEnvSchema, { ...base, APP_API_KEYS: 'app-1, app-2', ADMIN_API_KEYS: 'admin-1' });
    expect(config).toMatchObject({ APP_API_KEYS: ['app-1', 'app-2'], ADMIN_API_KEYS: ['admin-1'] });
  });

  it.each([
    ['the same single key', 'shared-key', 'shared-key'],
    ['one key shared during a rotation', 'app-old,shared-key', 'admin-1, shared-key '],
  ])('refuses %s in both APP_API_KEYS and ADMIN_API_KEYS, without printing the key', (_what, app, admin) => {
    let thrown: unknown;
    try {
      parseEnv(apiEnvSchema, { ...base, APP_API_KEYS: app, ADMIN_API_KEYS: admin });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as Error).message;
    expect(message).toContain('ADMIN_API_KEYS: 1 key(s) also in APP_API_KEYS');
    expect(message).not.toContain('shared-key');
  });
});

describe('api configuration: idempotency keys', () => {
  const keys = { APP_API_KEYS: 'app-1', ADMIN_API_KEYS: 'admin-1' };

  it('takes over an idempotency key whose attempt died after 60 s by default', () => {
    expect(parseEnv(apiEnvSchema, { ...base, ...keys }).IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS).toBe(60_000);
  });

  it.each([
    ['the Stripe timeout', { STRIPE_TIMEOUT_MS: '60000' }, '60000'],
    ['the RevenueCat timeout', { REVENUECAT_API_TIMEOUT_MS: '90000' }, '90000'],
  ])('refuses a lock timeout not above %s (a retry could resume a request still waiting on it)', (_what, extra, ms) => {
    expect(() => parseEnv(apiEnvSchema, { ...base, ...keys, ...extra })).toThrow(
      `IDEMPOTENCY_KEY_LOCK_TIMEOUT_MS: must exceed STRIPE_TIMEOUT_MS and REVENUECAT_API_TIMEOUT_MS (${ms})`,
    );
  });
});
