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
