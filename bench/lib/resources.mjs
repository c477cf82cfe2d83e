// The bench's private resources: databases named tally_bench_<run>_*, each created from a
// template migrated with billing-core's migrations (platform's runner), and Redis keys under bench queue prefixes.
// Everything is removed at the end, also after a failure or Ctrl-C.
import { loadMigrate, pg, Redis } from './workspace.mjs';

export class BenchResources {
  constructor({ serverUrl, redisUrl, runId }) {
    this.serverUrl = serverUrl;
    this.redisUrl = redisUrl;
    this.runId = runId;
    this.databases = [];
    this.prefixes = [];
    this.template = `tally_bench_${runId}_template`;
    /** Extensions created in the template (every phase's database has them). */
    this.extensions = [];
  }

  urlOf(name) {
    const url = new URL(this.serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async admin(fn) {
    const client = new pg.Client({ connectionString: this.urlOf('postgres') });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  async prepareTemplate() {
    await this.admin((client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(this.template)}`));
    this.databases.push(this.template);
    const migrate = await loadMigrate();
    await migrate(this.urlOf(this.template));
    if (this.extensions.length > 0 || this.templateSql) {
      const client = new pg.Client({ connectionString: this.urlOf(this.template) });
      await client.connect();
      try {
        for (const name of this.extensions)
          await client.query(`CREATE EXTENSION IF NOT EXISTS ${pg.escapeIdentifier(name)}`);
        if (this.templateSql) await client.query(this.templateSql);
      } finally {
        await client.end();
      }
    }
  }

  /** A fresh migrated database; returns its URL. */
  async database(label) {
    const name = `tally_bench_${this.runId}_${label}`;
    await this.admin((client) =>
      client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(this.template)}`),
    );
    this.databases.push(name);
    return this.urlOf(name);
  }

  prefix(label) {
    const prefix = `tally-bench-${this.runId}-${label}`;
    this.prefixes.push(prefix);
    return prefix;
  }

  async cleanup() {
    const redis = new Redis(this.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: false });
    redis.on('error', () => undefined);
    try {
      for (const prefix of this.prefixes) {
        let cursor = '0';
        do {
          const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          cursor = nextCursor;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      }
    } catch (error) {
      process.stderr.write(`bench: could not remove Redis keys: ${error.message}\n`);
    } finally {
      redis.disconnect();
    }
    for (const name of this.databases.reverse()) {
      await this.admin((client) =>
        client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
      ).catch((error) => process.stderr.write(`bench: could not drop ${name}: ${error.message}\n`));
    }
  }
}

/** A small pg pool for the bench's own queries (counts, timestamps). */
export function benchPool(url) {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  return pool;
}
