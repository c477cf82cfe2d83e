import { ConfigError, parseEnv } from '@tally/platform';
import {
  appleConsumptionConfigProblems,
  appWebhookConfigProblems,
  autoTopupConfigProblems,
  googlePlayConfigProblems,
  optInWorkerRoles,
  studioConfigProblems,
  workerEnvSchema,
  workerRoles,
} from './config';

describe('worker configuration: WORKER_ROLES', () => {
  const rolesOf = (WORKER_ROLES: string | undefined) =>
    parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', WORKER_ROLES }).WORKER_ROLES;
  const everyDefaultRole = [
    'inbox',
    'relay',
    'studio',
    'studio-sweeper',
    'installments',
    'auto-topup',
    'apple-consumption',
    'google-play-consume',
    'google-play-voided',
    'credit-expiry',
    'email',
    'app-webhooks',
    'retention',
  ];

  it('runs every role but the opt-in reconcile and apple-reconcile when unset, empty or all', () => {
    // Spelled out rather than derived from workerRoles, so a new role shows up here on purpose.
    expect(optInWorkerRoles).toEqual(['reconcile', 'apple-reconcile']);
    expect([...workerRoles].sort()).toEqual([...everyDefaultRole, 'reconcile', 'apple-reconcile'].sort());
    expect(rolesOf(undefined)).toEqual(everyDefaultRole);
    expect(rolesOf('')).toEqual(everyDefaultRole);
    expect(rolesOf('all')).toEqual(everyDefaultRole);
    expect(rolesOf(' all ')).toEqual(everyDefaultRole);
  });

  it('adds reconcile and apple-reconcile only when named, next to all or alone', () => {
    expect(rolesOf('all,reconcile')).toEqual([...everyDefaultRole, 'reconcile']);
    expect(rolesOf('reconcile, all')).toEqual([...everyDefaultRole, 'reconcile']);
    expect(rolesOf('reconcile')).toEqual(['reconcile']);
    expect(rolesOf('all,apple-reconcile')).toEqual([...everyDefaultRole, 'apple-reconcile']);
    expect(rolesOf('apple-reconcile')).toEqual(['apple-reconcile']);
  });

  it('runs exactly the named roles when all is not among them', () => {
    expect(rolesOf('inbox')).toEqual(['inbox']);
    expect(rolesOf('email,relay,relay')).toEqual(['relay', 'email']);
  });

  it.each([
    ['an unknown name', 'inbox,scheduler', 'scheduler'],
    ['an unknown name next to all', 'all,reconcil', 'reconcil'],
    ['a name in the wrong case', 'Inbox', 'Inbox'],
  ])('refuses %s with a message naming it and every valid role', (_case, value, bad) => {
    let error: unknown;
    try {
      rolesOf(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'invalid configuration:\n' +
        `  - WORKER_ROLES: unknown role "${bad}"; each role is one of: all, inbox, relay, studio, ` +
        'studio-sweeper, installments, auto-topup, apple-consumption, google-play-consume, google-play-voided, ' +
        'credit-expiry, email, app-webhooks, retention, reconcile, apple-reconcile',
    );
  });
});

const keyRequired = 'AI_STUDIO_API_KEY is required when AI_STUDIO_BASE_URL is set';
const stuckAfterTimeout =
  'STUDIO_STUCK_AFTER_MS must exceed AI_STUDIO_TIMEOUT_MS (or the sweeper refunds generations that are still running)';

/** The problems of a worker environment, parsed as the worker's composition root parses it. */
const problemsOf = (env: Record<string, string>) =>
  studioConfigProblems(parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }));

describe('the AI Studio configuration cross-checks', () => {
  it('accepts the defaults (no AI service; the sweeper waits longer than the AI call)', () => {
    expect(problemsOf({})).toEqual([]);
  });

  it('accepts an AI service with its key', () => {
    expect(problemsOf({ AI_STUDIO_BASE_URL: 'https://ai.example.com', AI_STUDIO_API_KEY: 'k' })).toEqual([]);
  });

  it('refuses an AI service URL without its key', () => {
    expect(problemsOf({ AI_STUDIO_BASE_URL: 'https://ai.example.com' })).toEqual([keyRequired]);
  });

  it('refuses a stuck limit that does not exceed the AI timeout, so the sweeper never refunds a running generation', () => {
    expect(problemsOf({ AI_STUDIO_TIMEOUT_MS: '5000', STUDIO_STUCK_AFTER_MS: '5000' })).toEqual([stuckAfterTimeout]);
    expect(problemsOf({ AI_STUDIO_TIMEOUT_MS: '5000', STUDIO_STUCK_AFTER_MS: '4999' })).toEqual([stuckAfterTimeout]);
    expect(problemsOf({ AI_STUDIO_TIMEOUT_MS: '5000', STUDIO_STUCK_AFTER_MS: '5001' })).toEqual([]);
    // A stuck limit below the default timeout (120 s) is refused even when the timeout is not set.
    expect(problemsOf({ STUDIO_STUCK_AFTER_MS: '60000' })).toEqual([stuckAfterTimeout]);
  });

  it('lists every problem at once', () => {
    expect(
      problemsOf({
        AI_STUDIO_BASE_URL: 'https://ai.example.com',
        AI_STUDIO_TIMEOUT_MS: '9000',
        STUDIO_STUCK_AFTER_MS: '1000',
      }),
    ).toEqual([keyRequired, stuckAfterTimeout]);
  });
});

describe('worker configuration: IDEMPOTENCY_KEY_TTL_HOURS', () => {
  const ttlOf = (env: Record<string, string>) =>
    parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }).IDEMPOTENCY_KEY_TTL_HOURS;

  it('keeps the api idempotency keys 24 hours by default, or as set', () => {
    expect([ttlOf({}), ttlOf({ IDEMPOTENCY_KEY_TTL_HOURS: '48' })]).toEqual([24, 48]);
  });

  it.each(['0', '-1', '1.5', 'a day'])('refuses %s hours', (value) => {
    expect(() => ttlOf({ IDEMPOTENCY_KEY_TTL_HOURS: value })).toThrow(ConfigError);
  });
});

describe('worker configuration: REVENUECAT_VERIFY_PURCHASES', () => {
  const verifyOf = (env: Record<string, string>) =>
    parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }).REVENUECAT_VERIFY_PURCHASES;

  it('verifies token packs against RevenueCat unless told false, and refuses anything but true or false', () => {
    expect(verifyOf({})).toBe(true);
    expect(verifyOf({ REVENUECAT_VERIFY_PURCHASES: 'true' })).toBe(true);
    expect(verifyOf({ REVENUECAT_VERIFY_PURCHASES: 'false' })).toBe(false);
    expect(() => verifyOf({ REVENUECAT_VERIFY_PURCHASES: 'no' })).toThrow(ConfigError);
  });
});

describe('the app webhook configuration', () => {
  const parse = (env: Record<string, string>) =>
    parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env });

  it('defaults to the Standard Webhooks schedule, a 15 s timeout and 30 days of retention, delivering nothing', () => {
    const config = parse({});
    expect({
      url: config.APP_WEBHOOK_URL,
      secrets: config.APP_WEBHOOK_SECRETS,
      timeoutMs: config.APP_WEBHOOK_TIMEOUT_MS,
      scheduleMs: config.APP_WEBHOOK_RETRY_SCHEDULE_MS,
      retentionDays: config.APP_WEBHOOK_RETENTION_DAYS,
      threshold: config.WALLET_LOW_BALANCE_THRESHOLD,
    }).toEqual({
      url: undefined,
      secrets: [],
      timeoutMs: 15_000,
      scheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      retentionDays: 30,
      threshold: undefined,
    });
    expect(appWebhookConfigProblems(config)).toEqual([]);
  });

  it('reads a schedule override, the secrets as a list and the threshold', () => {
    const config = parse({
      APP_WEBHOOK_URL: 'https://app.example.com/hooks',
      APP_WEBHOOK_SECRETS: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, whsec_bm90aGVyIHNlY3JldA==',
      APP_WEBHOOK_RETRY_SCHEDULE_MS: '100, 200',
      WALLET_LOW_BALANCE_THRESHOLD: '50',
    });
    expect(config.APP_WEBHOOK_SECRETS).toEqual([
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'whsec_bm90aGVyIHNlY3JldA==',
    ]);
    expect(config.APP_WEBHOOK_RETRY_SCHEDULE_MS).toEqual([100, 200]);
    expect(config.WALLET_LOW_BALANCE_THRESHOLD).toBe(50);
    expect(appWebhookConfigProblems(config)).toEqual([]);
  });

  it.each([
    ['a secret without the whsec_ prefix', { APP_WEBHOOK_SECRETS: 'plain-secret' }],
    ['a delay that is not a positive number', { APP_WEBHOOK_RETRY_SCHEDULE_MS: '5000,-1' }],
    ['a threshold of zero', { WALLET_LOW_BALANCE_THRESHOLD: '0' }],
  ])('refuses %s', (_what, env) => {
    expect(() => parse(env)).toThrow(ConfigError);
  });

  it('needs the secrets with the URL, and a processing window longer than the timeout', () => {
    expect(
      appWebhookConfigProblems(
        parse({ APP_WEBHOOK_URL: 'https://app.example.com/hooks', RELAY_PROCESSING_STALE_AFTER_MS: '10000' }),
      ),
    ).toEqual([
      'APP_WEBHOOK_SECRETS is required when APP_WEBHOOK_URL is set (comma-separated whsec_ secrets)',
      'RELAY_PROCESSING_STALE_AFTER_MS must exceed APP_WEBHOOK_TIMEOUT_MS (or a delivery still waiting for its answer is sent again)',
    ]);
  });
});

describe('worker configuration: PAYMENT_ENVIRONMENTS', () => {
  const environmentsOf = (PAYMENT_ENVIRONMENTS: string | undefined) =>
    parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', PAYMENT_ENVIRONMENTS })
      .PAYMENT_ENVIRONMENTS;

  it("accepts billing-core's environments, production only when unset, and refuses any other value", () => {
    expect(environmentsOf(undefined)).toEqual(['production']);
    expect(environmentsOf('')).toEqual(['production']);
    expect(environmentsOf('production,sandbox')).toEqual(['production', 'sandbox']);
    expect(environmentsOf('sandbox')).toEqual(['sandbox']);
    expect(() => environmentsOf('production,live')).toThrow(ConfigError);
    expect(() => environmentsOf('production,live')).toThrow(
      /PAYMENT_ENVIRONMENTS.*each value is production or sandbox/s,
    );
  });
});

describe('the auto top-up configuration cross-check', () => {
  const problemsOf = (env: Record<string, string>) =>
    autoTopupConfigProblems(parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }));
  const leaseAfterTimeout =
    'AUTO_TOPUP_LEASE_MS must exceed STRIPE_TIMEOUT_MS (or a charge still waiting for its answer is asked again)';

  it('accepts the defaults: a charge is leased longer than Stripe is waited for', () => {
    expect(problemsOf({})).toEqual([]);
  });

  it('refuses a lease that does not exceed the Stripe timeout, so a charge still waiting is never claimed again', () => {
    expect(problemsOf({ STRIPE_TIMEOUT_MS: '5000', AUTO_TOPUP_LEASE_MS: '5000' })).toEqual([leaseAfterTimeout]);
    expect(problemsOf({ STRIPE_TIMEOUT_MS: '5000', AUTO_TOPUP_LEASE_MS: '5001' })).toEqual([]);
  });
});

describe('the apple-consumption configuration cross-check', () => {
  const problemsOf = (env: Record<string, string>) =>
    appleConsumptionConfigProblems(parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }));

  it('accepts the defaults and refuses a lease that does not exceed the App Store API timeout', () => {
    expect(problemsOf({})).toEqual([]);
    expect(problemsOf({ APPLE_API_TIMEOUT_MS: '5000', APPLE_CONSUMPTION_LEASE_MS: '5000' })).toEqual([
      'APPLE_CONSUMPTION_LEASE_MS must exceed APPLE_API_TIMEOUT_MS (or a request still waiting for its answer is claimed again)',
    ]);
  });
});

describe('the Google Play configuration cross-check', () => {
  const problemsOf = (env: Record<string, string>) =>
    googlePlayConfigProblems(parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', ...env }));

  it('accepts the defaults, and refuses a consume lease that does not exceed the API timeout', () => {
    expect(problemsOf({})).toEqual([]);
    expect(problemsOf({ GOOGLE_PLAY_API_TIMEOUT_MS: '5000', GOOGLE_PLAY_CONSUME_LEASE_MS: '5000' })).toEqual([
      'GOOGLE_PLAY_CONSUME_LEASE_MS must exceed GOOGLE_PLAY_API_TIMEOUT_MS (or a consume still waiting for its answer is asked again)',
    ]);
    expect(problemsOf({ GOOGLE_PLAY_API_TIMEOUT_MS: '5000', GOOGLE_PLAY_CONSUME_LEASE_MS: '5001' })).toEqual([]);
  });
});
