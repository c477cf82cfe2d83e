import { z } from 'zod';
import { baseEnvSchema, ConfigError, csvList, parseEnv } from './env';

describe('configuration parsing', () => {
  it('applies the documented defaults', () => {
    const config = parseEnv(baseEnvSchema, { DATABASE_URL: 'postgres://localhost/tally' });
    expect(config).toMatchObject({ REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: 'tally', LOG_LEVEL: 'info' });
  });

  it('lists every problem in one readable error', () => {
    expect(() =>
      parseEnv(baseEnvSchema, { DATABASE_URL: 'mysql://x', REDIS_URL: 'http://x', LOG_LEVEL: 'loud' }),
    ).toThrow(ConfigError);
    try {
      parseEnv(baseEnvSchema, { DATABASE_URL: 'mysql://x', REDIS_URL: 'http://x', LOG_LEVEL: 'loud' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('DATABASE_URL: must be a postgres:// URL');
      expect(message).toContain('REDIS_URL: must be a redis:// or rediss:// URL');
      expect(message).toContain('LOG_LEVEL');
    }
  });

  it('reads rotating secrets as comma-separated lists', () => {
    const schema = z.object({ SECRETS: csvList });
    expect(parseEnv(schema, { SECRETS: ' a, b ,,c ' }).SECRETS).toEqual(['a', 'b', 'c']);
    expect(parseEnv(schema, {}).SECRETS).toEqual([]);
  });
});
