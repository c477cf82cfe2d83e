// `node bench/prefill-history.mjs <database-url> [--inbox N] [--ledger N] [--users N]`: fills a
// migrated Tally database with a processed history (issue 21's big inbox: 10 million processed
// inbox rows and 10 million ledger rows by default), all in SQL with generate_series, so that
// ingest and drain can be measured against full tables beside the empty-table figures.
//
// What it writes, consistent with what Tally itself would have written:
// - `--users` users with wallets; ledger row g credits user g % users 100 tokens, so each user's
//   balances before/after follow from g alone (no window function over 10 million rows) and the
//   wallet holds the sum (`tally ledger verify` agrees);
// - one processed Stripe `payment_intent.succeeded` inbox row per ledger row (the rest, when
//   `--inbox` exceeds `--ledger`, `ignored` as `not_a_token_pack`), received over the two
//   years before now; rows older than 90 days have their raw body pruned, as the retention role
//   leaves them, the others keep a ~1 KB body.
// Triggers and foreign keys are off for the load (`session_replication_role = replica`, so a
// superuser or the table owner on a managed server): the ledger's wallet trigger would otherwise
// update a wallet per row. The constraints Tally relies on (unique references, unique event ids)
// are indexes, and stay enforced. Never run it against a database that holds real data.
import { pg } from './lib/workspace.mjs';

const args = process.argv.slice(2);
const url = args.find((arg) => !arg.startsWith('--'));
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const inboxRows = option('inbox', 10_000_000);
const ledgerRows = Math.min(option('ledger', 10_000_000), inboxRows);
const users = option('users', 1_000_000);
const batch = option('batch', 1_000_000);
if (!url || ![inboxRows, ledgerRows, users, batch].every((n) => Number.isSafeInteger(n) && n > 0)) {
  process.stderr.write('usage: node bench/prefill-history.mjs <database-url> [--inbox N] [--ledger N] [--users N]\n');
  process.exit(2);
}

const client = new pg.Client({ connectionString: url, application_name: 'tally-bench-prefill' });
await client.connect();
const started = Date.now();
const log = (message) => process.stdout.write(`[prefill ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
const history = "interval '730 days'";

try {
  const { rows } = await client.query('SELECT count(*)::int AS n FROM inbox_events');
  if (rows[0].n > 0) throw new Error('the database already has inbox rows: prefill an empty, migrated database');
  await client.query('SET session_replication_role = replica');
  await client.query(
    `INSERT INTO users (id, created_at)
       SELECT 'hist-user-' || u, now() - ${history} FROM generate_series(0, $1::int - 1) u`,
    [users],
  );
  // Each user's credit count: ledger rows g < ledgerRows with g % users = u.
  await client.query(
    `INSERT INTO wallets (user_id, balance, created_at, updated_at)
       SELECT 'hist-user-' || u, 100 * ((($2::bigint - 1 - u) / $1::bigint) + 1), now() - ${history}, now()
         FROM generate_series(0, $1::int - 1) u WHERE u < $2::bigint`,
    [users, ledgerRows],
  );
  log(`${users} users and wallets`);
  // In batches, so one transaction never holds ten million rows of WAL.
  for (let from = 0; from < inboxRows; from += batch) {
    const to = Math.min(from + batch, inboxRows) - 1;
    await client.query(
      `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, user_id,
           provider_payment_intent_id, raw_body, raw_body_pruned_at, status, attempts, outcome_detail,
           outcome_code, received_at, enqueued_at, processed_at, updated_at, source)
         SELECT 'stripe', 'evt_hist_' || g, 'payment_intent.succeeded', true, 'production',
                'hist-user-' || (g % $3::bigint), 'pi_hist_' || g,
                CASE WHEN at > now() - interval '90 days' THEN body END,
                CASE WHEN at > now() - interval '90 days' THEN NULL ELSE at + interval '90 days' END,
                CASE WHEN g < $4::bigint THEN 'processed' ELSE 'ignored' END, 1,
                CASE WHEN g < $4::bigint THEN 'credited 100 tokens (tokens_100)' ELSE 'no metadata.pack_id' END,
                CASE WHEN g < $4::bigint THEN 'credited' ELSE 'not_a_token_pack' END,
                at, at, at + interval '5 milliseconds', at + interval '5 milliseconds', 'webhook'
           FROM (SELECT g, now() - ${history} + (${history} * (g::float8 / $5::bigint)) AS at,
                        '{"id":"evt_hist_' || g || '","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_hist_' || g
                          || '","object":"payment_intent","amount":499,"currency":"usd","metadata":{"user_id":"hist-user-' || (g % $3::bigint)
                          || '","pack_id":"tokens_100"},"padding":"' || repeat('x', 700) || '"}}}' AS body
                   FROM generate_series($1::bigint, $2::bigint) g) s`,
      [from, to, users, ledgerRows, inboxRows],
    );
    log(`inbox rows ${to + 1} of ${inboxRows}`);
  }
  for (let from = 0; from < ledgerRows; from += batch) {
    const to = Math.min(from + batch, ledgerRows) - 1;
    // Inbox row ids are 1..inboxRows in generate order (an empty table's identity), so event g is id g + 1.
    await client.query(
      `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason,
           inbox_event_id, created_at)
         SELECT 'hist-user-' || (g % $3::bigint), 'stripe:payment:pi_hist_' || g, 100,
                100 * (g / $3::bigint), 100 * (g / $3::bigint) + 100, 'token_pack_purchase', g + 1,
                now() - ${history} + (${history} * (g::float8 / $4::bigint)) + interval '5 milliseconds'
           FROM generate_series($1::bigint, $2::bigint) g`,
      [from, to, users, inboxRows],
    );
    log(`ledger rows ${to + 1} of ${ledgerRows}`);
  }
  await client.query('RESET session_replication_role');
  const check = await client.query(
    `SELECT (SELECT min(id) FROM inbox_events) = 1 AS ids_from_one,
            (SELECT count(*) FROM ledger_entries l JOIN inbox_events e ON e.id = l.inbox_event_id
              WHERE l.id IN (1, $1::bigint) AND e.provider_payment_intent_id <> substr(l.reference, 16)) AS mismatched`,
    [ledgerRows],
  );
  if (!check.rows[0].ids_from_one || Number(check.rows[0].mismatched) !== 0) {
    throw new Error(`ledger rows do not point at their events: ${JSON.stringify(check.rows[0])}`);
  }
  // VACUUM as well as ANALYZE: a real history has been vacuumed (autovacuum's insert threshold)
  // long before it is ten million rows, so its pages are all-visible (index-only scans skip the
  // heap) and their hint bits set; without it the first reads of old rows would write them.
  await client.query('VACUUM (ANALYZE)');
  log('vacuumed and analyzed');
  const sizes = await client.query(
    `SELECT pg_size_pretty(pg_total_relation_size('inbox_events')) AS inbox,
            pg_size_pretty(pg_total_relation_size('ledger_entries')) AS ledger`,
  );
  log(`done: inbox_events ${sizes.rows[0].inbox}, ledger_entries ${sizes.rows[0].ledger} (with indexes)`);
} finally {
  await client.end();
}
