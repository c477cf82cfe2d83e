import { shippedConfigValues, shippedPlaceholders } from '../testing/shipped-config-values';
import { demoConfigurationProblems, demoOrPlaceholderOf, demoSecretValues } from './production-configuration';

/** Variables of Tally's that hold secrets (POSTGRES_* are the Postgres image's own). */
const secretVariable = /^(?!POSTGRES_).*(SECRET|AUTH|KEY|PASSWORD)|^DATABASE_(MIGRATION_)?URL$/;

/** `postgres://postgres@127.0.0.1/tally` (.env.example) holds no secret; `postgres://tally:tally@…` does. */
const urlWithoutPassword = (value: string) => /^[a-z]+:\/\//.test(value) && !/:\/\/[^/@]*:[^/@]*@/.test(value);

describe('the demo configuration in production', () => {
  it('knows every secret that .env.example and docker-compose.yml publish', () => {
    const secrets = ['.env.example', 'docker-compose.yml']
      .flatMap(shippedConfigValues)
      .filter(
        ({ variable, value, commented }) => secretVariable.test(variable) && !commented && !urlWithoutPassword(value),
      );
    expect(secrets.map((s) => s.variable)).toEqual(expect.arrayContaining(['STRIPE_WEBHOOK_SECRETS', 'APP_API_KEYS']));
    for (const { variable, value } of secrets)
      expect({ variable, kind: demoOrPlaceholderOf(value) }).toEqual({ variable, kind: 'demo' });
    for (const demo of demoSecretValues) {
      expect(secrets.some(({ value }) => value.includes(demo))).toBe(true);
    }
  });

  it('refuses every placeholder that infra/ ships, in the variable it ships in', () => {
    const placeholders = shippedPlaceholders();
    // The Kubernetes secret template ships a dozen; a new one anywhere under infra/ is read too.
    expect(placeholders.length).toBeGreaterThanOrEqual(12);
    for (const { file, variable, value } of placeholders) {
      const problems = demoConfigurationProblems({ NODE_ENV: 'production', [variable]: value });
      expect({ file, variable, refused: problems.map((p) => p.variable) }).toEqual({
        file,
        variable,
        refused: [variable],
      });
      const asList = demoConfigurationProblems({ NODE_ENV: 'production', [variable]: ['real_value', value] });
      expect(asList.map((p) => p.variable)).toEqual([variable]);
    }
  });

  it('refuses demo secrets, placeholders, body-only packs and sandbox payments only under NODE_ENV=production', () => {
    const demoConfig = {
      STRIPE_WEBHOOK_SECRETS: ['whsec_operator', 'whsec_demo_tally_local_secret'],
      REVENUECAT_WEBHOOK_AUTH: ['rc_demo_webhook_auth'],
      APP_API_KEYS: ['app_demo_key'],
      ADMIN_API_KEYS: ['admin_demo_key'],
      STRIPE_SECRET_KEY: 'sk_live_replace_me',
      DATABASE_URL: new URL('postgres://tally:REPLACE_ME@db:5432/tally'),
      REVENUECAT_VERIFY_PURCHASES: false,
      PAYMENT_ENVIRONMENTS: ['production', 'sandbox'],
    };
    expect(demoConfigurationProblems(demoConfig)).toEqual([]);
    expect(demoConfigurationProblems({ ...demoConfig, NODE_ENV: 'development' })).toEqual([]);
    expect(demoConfigurationProblems({ ...demoConfig, NODE_ENV: 'production' }).map((p) => p.variable)).toEqual([
      'STRIPE_WEBHOOK_SECRETS',
      'REVENUECAT_WEBHOOK_AUTH',
      'APP_API_KEYS',
      'ADMIN_API_KEYS',
      'STRIPE_SECRET_KEY',
      'DATABASE_URL',
      'REVENUECAT_VERIFY_PURCHASES',
      'PAYMENT_ENVIRONMENTS',
    ]);
    const operatorConfig = {
      NODE_ENV: 'production',
      STRIPE_WEBHOOK_SECRETS: ['whsec_operator'],
      APP_API_KEYS: ['app_operator'],
      DATABASE_URL: 'postgres://tally:s3cret@db:5432/tally',
      REVENUECAT_VERIFY_PURCHASES: true,
      PAYMENT_ENVIRONMENTS: ['production'],
    };
    expect(demoConfigurationProblems(operatorConfig)).toEqual([]);
  });

  it('names the variable, never the value', () => {
    const problems = demoConfigurationProblems({
      NODE_ENV: 'production',
      APP_API_KEYS: ['app_demo_key'],
      DATABASE_URL: 'postgres://tally:REPLACE_ME@db/tally',
    });
    expect(problems).toHaveLength(2);
    expect(JSON.stringify(problems)).not.toContain('app_demo_key');
    expect(JSON.stringify(problems)).not.toContain('postgres://');
  });
});
