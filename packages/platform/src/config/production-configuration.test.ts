import { readFileSync } from 'node:fs';
import path from 'node:path';
import { demoConfigurationProblems, demoSecretValues } from './production-configuration';

const root = path.resolve(__dirname, '../../../..');

describe('the demo configuration in production', () => {
  it('knows every secret that .env.example and docker-compose.yml publish', () => {
    const example = readFileSync(path.join(root, '.env.example'), 'utf8');
    const secretLines = example
      .split('\n')
      .filter((line) => /^(STRIPE_WEBHOOK_SECRETS|REVENUECAT_WEBHOOK_AUTH|APP_API_KEYS|ADMIN_API_KEYS)=/.test(line));
    expect(secretLines).toHaveLength(4);
    for (const line of secretLines) {
      const value = line.slice(line.indexOf('=') + 1);
      expect(demoSecretValues.some((demo) => value.includes(demo))).toBe(true);
    }
    const compose = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    for (const demo of demoSecretValues) expect(compose).toContain(demo);
  });

  it('refuses demo secrets, body-only packs and sandbox payments only under NODE_ENV=production', () => {
    const demoConfig = {
      STRIPE_WEBHOOK_SECRETS: ['whsec_operator', 'whsec_demo_tally_local_secret'],
      REVENUECAT_WEBHOOK_AUTH: ['rc_demo_webhook_auth'],
      APP_API_KEYS: ['app_demo_key'],
      ADMIN_API_KEYS: ['admin_demo_key'],
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
      'REVENUECAT_VERIFY_PURCHASES',
      'PAYMENT_ENVIRONMENTS',
    ]);
    const operatorConfig = {
      NODE_ENV: 'production',
      STRIPE_WEBHOOK_SECRETS: ['whsec_operator'],
      APP_API_KEYS: ['app_operator'],
      REVENUECAT_VERIFY_PURCHASES: true,
      PAYMENT_ENVIRONMENTS: ['production'],
    };
    expect(demoConfigurationProblems(operatorConfig)).toEqual([]);
  });

  it('names the variable, never the value', () => {
    const problems = demoConfigurationProblems({ NODE_ENV: 'production', APP_API_KEYS: ['app_demo_key'] });
    expect(JSON.stringify(problems)).not.toContain('app_demo_key');
  });
});
