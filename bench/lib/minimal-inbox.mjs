// The minimal worker's side of the drain (baselines/minimal-worker.mjs): its one-index inbox
// table, a backlog of rows and jobs, and pgbench running the same transaction on those rows.
import { writeFileSync } from 'node:fs';
import { scriptPath } from './pgbench.mjs';
import { bullmq, loadAdvisoryLocks, Redis } from './workspace.mjs';

/** One index: the primary key on the provider's event id, which is also the dedupe. */
export const minimalInboxDdl = `CREATE TABLE minimal_inbox (
  event_id text PRIMARY KEY, provider text NOT NULL, user_id text NOT NULL, object_id text NOT NULL,
  customer_id text, body text NOT NULL, status text NOT NULL DEFAULT 'received',
  received_at timestamptz NOT NULL DEFAULT now(), processed_at timestamptz)`;

/** Event ids of the minimal backlog: `mevt_<n>` (pgbench derives them from its counters). */
export async function fillMinimalBacklog({ pool, redisUrl, prefix, flow, events, users, body, withJobs }) {
  await pool.query(minimalInboxDdl);
  await pool.query(
    `INSERT INTO minimal_inbox (event_id, provider, user_id, object_id, customer_id, body)
     SELECT 'mevt_' || g, $4, 'bench-user-' || (g % $2), 'pi_min_' || g, 'cus_bench' || (g % $2), $3
     FROM generate_series(0, $1 - 1) AS g`,
    [events, users, body, flow],
  );
  if (!withJobs) return;
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  connection.on('error', () => undefined);
  const queue = new bullmq.Queue('minimal', { connection, prefix });
  for (let start = 0; start < events; start += 1000) {
    const jobs = [];
    for (let g = start; g < Math.min(events, start + 1000); g += 1) {
      jobs.push({
        name: 'process',
        data: { eventId: `mevt_${g}` },
        opts: { jobId: `mevt_${g}`, removeOnComplete: { age: 7 * 86400, count: 50000 } },
      });
    }
    await queue.addBulk(jobs);
  }
  await queue.close();
  connection.disconnect();
}

/**
 * pgbench running the minimal worker's transaction, each transaction on the next unprocessed row
 * (client c takes rows c, c + clients, c + 2 clients ...: run it with -t events/clients), so every
 * row is credited exactly once, as in the drain.
 */
export function minimalCreditScript(flow) {
  const { USER_LOCK_NAMESPACE } = loadAdvisoryLocks();
  const file = scriptPath(`minimal-${flow}.sql`);
  const stripe = flow === 'stripe';
  // The row's columns, as fillMinimalBacklog wrote them (pgbench has no string parameters in
  // simple mode, so the values are derived from the row number like the fill did).
  const uid = "('bench-user-' || (:g % :users))";
  const oid = "('pi_min_' || :g)";
  const cid = "('cus_bench' || (:g % :users))";
  const lines = [
    '\\set g :client_id + :n * :clients',
    '\\set n :n + 1',
    'BEGIN;',
    `WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(user_id)) FROM minimal_inbox WHERE event_id = 'mevt_' || :g) SELECT user_id, object_id, customer_id, status FROM minimal_inbox WHERE event_id = 'mevt_' || :g AND (SELECT count(*) FROM l) >= 0 FOR UPDATE;`,
    `INSERT INTO users (id) VALUES (${uid}) ON CONFLICT DO NOTHING;`,
    `INSERT INTO wallets (user_id) VALUES (${uid}) ON CONFLICT DO NOTHING;`,
    `SELECT balance AS before FROM wallets WHERE user_id = ${uid} FOR UPDATE \\gset`,
    '\\set after :before + 100',
    `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason) VALUES (${uid}, ${stripe ? `'stripe:payment:' || ${oid}` : "'revenuecat:event:mevt_' || :g"}, 100, :before, :after, 'token_pack_purchase') ON CONFLICT (reference) DO NOTHING;`,
    ...(stripe
      ? [
          `INSERT INTO stripe_customers (customer_id, user_id) VALUES (${cid}, ${uid}) ON CONFLICT DO NOTHING;`,
          `INSERT INTO payments (provider_payment_id, user_id, kind, product_id, amount_minor, currency, ledger_reference, tokens_granted, customer_email) VALUES (${oid}, ${uid}, 'token_pack', 'tokens_100', 499, 'usd', 'stripe:payment:' || ${oid}, 100, 'buyer@example.com') RETURNING id AS pay \\gset`,
          `INSERT INTO email_outbox (payment_id, user_id, to_address, subject, body) VALUES (:pay, ${uid}, 'buyer@example.com', 'Your token purchase', 'Thank you: 100 tokens were added.');`,
        ]
      : []),
    "UPDATE minimal_inbox SET status = 'processed', processed_at = now() WHERE event_id = 'mevt_' || :g;",
    'COMMIT;',
    '',
  ];
  writeFileSync(file, lines.join('\n'));
  return file;
}
