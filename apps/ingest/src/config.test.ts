import { ConfigError, parseEnv } from '@tally/platform';
import { ingestEnvSchema } from './config';

const base = { DATABASE_URL: 'postgres://localhost/tally' };

describe('ingest configuration', () => {
  it('takes the batch settings within their bounds', () => {
    const config = parseEnv(ingestEnvSchema, {
      ...base,
      INGEST_BATCH_MAX_SIZE: '1000',
      INGEST_BATCH_CONCURRENCY: '10',
    });
    expect(config).toMatchObject({ INGEST_BATCH_MAX_SIZE: 1000, INGEST_BATCH_CONCURRENCY: 10 });
    expect(parseEnv(ingestEnvSchema, base)).toMatchObject({ INGEST_BATCH_MAX_SIZE: 100, INGEST_BATCH_CONCURRENCY: 4 });
  });

  it.each([
    ['a batch whose bind parameters Postgres would refuse', { INGEST_BATCH_MAX_SIZE: '6000' }, 'INGEST_BATCH_MAX_SIZE'],
    ['more batches in flight than pool connections', { INGEST_BATCH_CONCURRENCY: '11' }, 'INGEST_BATCH_CONCURRENCY'],
  ])('refuses %s', (_what, settings, name) => {
    expect(() => parseEnv(ingestEnvSchema, { ...base, ...settings })).toThrow(ConfigError);
    expect(() => parseEnv(ingestEnvSchema, { ...base, ...settings })).toThrow(name);
  });
});

describe("ingest's Apple configuration", () => {
  const apple = {
    APPLE_ROOT_CERTIFICATES: '/etc/apple/AppleRootCA-G3.cer',
    APPLE_BUNDLE_ID: 'com.example.app',
    APPLE_APP_APPLE_ID: '1234567890',
  };

  it('reads the three values, the roots as a list of paths', () => {
    expect(parseEnv(ingestEnvSchema, { ...base, ...apple, NODE_ENV: 'production' })).toMatchObject({
      APPLE_ROOT_CERTIFICATES: ['/etc/apple/AppleRootCA-G3.cer'],
      APPLE_BUNDLE_ID: 'com.example.app',
      APPLE_APP_APPLE_ID: 1_234_567_890,
    });
  });

  it('stops a production start with half of them, naming what is missing', () => {
    const half = { ...base, APPLE_BUNDLE_ID: 'com.example.app', NODE_ENV: 'production' };
    expect(() => parseEnv(ingestEnvSchema, half)).toThrow(ConfigError);
    expect(() => parseEnv(ingestEnvSchema, half)).toThrow(/APPLE_ROOT_CERTIFICATES[\s\S]*APPLE_APP_APPLE_ID/);
    // Outside production half a configuration only leaves the store off.
    expect(() => parseEnv(ingestEnvSchema, { ...half, NODE_ENV: 'development' })).not.toThrow();
  });
});
