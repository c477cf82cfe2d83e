// Tally's built api for the phases that call it (holds, spend): users prefunded with one lot each,
// and the api started on a private database and queue prefix with the run's app key.
import path from 'node:path';
import { nodeFlags } from '../../scripts/node-flags.mjs';
import { parseEnvList, tallyEnvironment } from '../context.mjs';
import { freePort, startNode, waitForHttp } from './processes.mjs';
import { root } from './workspace.mjs';

/** What each prefunded user holds: enough that no run of the bench can drain it. */
export const prefund = 1_000_000_000;

/**
 * `count` users `<prefix>-<i>`, each holding `prefund` tokens in one never-expiring purchased lot
 * (balance = the lot), written in one transaction; returns their ids.
 */
export async function prefundTallyUsers(pool, prefix, count) {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO users (id) SELECT unnest($1::text[])', [ids]);
    await client.query('INSERT INTO wallets (user_id) SELECT unnest($1::text[])', [ids]);
    await client.query(
      `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason)
       SELECT id, 'bench:grant:' || id, $2::bigint, 0, $2::bigint, 'bench_grant' FROM unnest($1::text[]) AS id`,
      [ids, prefund],
    );
    await client.query(
      `INSERT INTO credit_lots (user_id, category, source, amount, remaining, expires_at)
       SELECT id, 'purchased', 'bench:grant:' || id, $2::bigint, $2::bigint, NULL FROM unnest($1::text[]) AS id`,
      [ids, prefund],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
  return ids;
}

/**
 * The built api (`apps/api/dist/main.js`) with Tally's bench environment, answering once healthy:
 * `{ handle, url }`. `extraNodeFlags` (profiling only, e.g. `--cpu-prof`) come after the api's own.
 */
/** Experiments only: BENCH_API_ENV, `NAME=value` pairs set in Tally's api (e.g. `SPEND_BATCH_TRANSACTIONS=4`). */
export async function startTallyApi(ctx, { databaseUrl, prefix, appKey, name = 'tally-api', extraNodeFlags = [] }) {
  const port = await freePort();
  const handle = startNode(
    name,
    path.join(root, 'apps/api/dist/main.js'),
    {
      ...tallyEnvironment,
      // These phases take no payment events; production only, so the api starts under any NODE_ENV.
      PAYMENT_ENVIRONMENTS: 'production',
      DATABASE_URL: databaseUrl,
      REDIS_URL: ctx.redisUrl,
      QUEUE_PREFIX: prefix,
      API_PORT: String(port),
      APP_API_KEYS: appKey,
      ADMIN_API_KEYS: `admin_bench_${ctx.runId}`,
      ...parseEnvList('BENCH_API_ENV', process.env.BENCH_API_ENV),
    },
    [],
    [...nodeFlags.api, ...extraNodeFlags],
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(handle, `${url}/healthz`);
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return { handle, url };
}
