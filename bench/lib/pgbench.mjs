// pgbench baselines: what Postgres itself does on this machine with the same statements.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripeTokenPackEvent } from './stripe-events.mjs';
import { loadAdvisoryLocks } from './workspace.mjs';

export function pgbenchPath() {
  for (const candidate of ['/usr/lib/postgresql/15/bin/pgbench', '/usr/lib/postgresql/16/bin/pgbench']) {
    if (existsSync(candidate)) return candidate;
  }
  const which = spawnSync('sh', ['-c', 'command -v pgbench'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() : null;
}

let dir;

/**
 * Where a pgbench script of this run goes: one temporary folder, made on first use and removed
 * when the process exits (also after a failure: the bench exits through process.exit).
 */
export function scriptPath(name) {
  if (dir === undefined) {
    dir = mkdtempSync(path.join(tmpdir(), 'tally-bench-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return path.join(dir, name);
}

/** The one-row inbox insert, with a 3 KB body like the HTTP runs. */
export function insertScript() {
  const body = stripeTokenPackEvent({ eventId: 'evt_pgbench', paymentIntentId: 'pi_pgbench', userId: 'bench-user-1' });
  const file = scriptPath('inbox-insert.sql');
  writeFileSync(
    file,
    [
      '\\set r random(1, 1000000000000)',
      `INSERT INTO inbox_events (provider, provider_event_id, type, livemode, environment, user_id, provider_customer_id, provider_payment_intent_id, raw_body, enqueued_at) VALUES ('stripe', 'evt_pgb_' || :client_id || '_' || :r, 'payment_intent.succeeded', false, 'sandbox', 'bench-user-1', 'cus_bench', 'pi_pgb_' || :client_id || '_' || :r, '${body.replaceAll("'", "''")}', now()) ON CONFLICT (provider, provider_event_id) DO NOTHING RETURNING id;`,
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * The worker's credit transaction for a Stripe token pack (the statements bare-worker.mjs runs:
 * claim, user and wallet, customer mapping, wallet lock, reference look-up, ledger row, payment,
 * email row, mark), on an existing
 * inbox row picked at random from :lo..:hi, for a random user of :users, with a fresh reference.
 */
export function creditScript() {
  const { USER_LOCK_NAMESPACE } = loadAdvisoryLocks();
  const file = scriptPath('credit.sql');
  const user = `('bench-user-' || :uid)`;
  writeFileSync(
    file,
    [
      '\\set id random(:lo, :hi)',
      '\\set uid random(0, :users - 1)',
      '\\set r random(1, 1000000000000)',
      "UPDATE inbox_events SET status = CASE WHEN attempts >= 1000000 THEN 'failed' ELSE 'processing' END, attempts = attempts + 1, next_attempt_at = NULL, updated_at = now() WHERE id = :id RETURNING *;",
      'BEGIN;',
      `SELECT pg_advisory_xact_lock(${USER_LOCK_NAMESPACE}, hashtext(${user}));`,
      'SELECT status FROM inbox_events WHERE id = :id FOR UPDATE;',
      `INSERT INTO users (id) VALUES (${user}) ON CONFLICT (id) DO NOTHING;`,
      `INSERT INTO wallets (user_id) VALUES (${user}) ON CONFLICT (user_id) DO NOTHING;`,
      `INSERT INTO stripe_customers (customer_id, user_id) VALUES ('cus_' || ${user}, ${user}) ON CONFLICT (customer_id) DO NOTHING RETURNING user_id;`,
      `SELECT user_id FROM stripe_customers WHERE customer_id = 'cus_' || ${user};`,
      `SELECT balance AS bal FROM wallets WHERE user_id = ${user} FOR UPDATE \\gset`,
      "SELECT * FROM ledger_entries WHERE reference = 'pgbench:' || :client_id || ':' || :r;",
      '\\set after :bal + 100',
      `INSERT INTO ledger_entries (user_id, reference, amount, balance_before, balance_after, reason, inbox_event_id) VALUES (${user}, 'pgbench:' || :client_id || ':' || :r, 100, :bal, :after, 'token_pack_purchase', :id) ON CONFLICT (reference) DO NOTHING RETURNING *;`,
      `INSERT INTO payments (provider_payment_id, user_id, kind, product_id, amount_minor, currency, ledger_reference, tokens_granted, customer_email, inbox_event_id) VALUES ('pi_pgbench_' || :client_id || '_' || :r, ${user}, 'token_pack', 'tokens_100', 499, 'usd', 'pgbench:' || :client_id || ':' || :r, 100, 'buyer@example.com', :id) ON CONFLICT (provider, provider_payment_id) DO NOTHING RETURNING id \\gset pay_`,
      `INSERT INTO email_outbox (payment_id, user_id, to_address, subject, body) VALUES (:pay_id, ${user}, 'buyer@example.com', 'Your token purchase', 'Thank you: 100 tokens were added to your wallet.') ON CONFLICT (payment_id) DO NOTHING;`,
      "UPDATE inbox_events SET status = 'processed', outcome_code = 'credited', outcome_detail = 'credited 100 tokens (tokens_100)', last_error = NULL, next_attempt_at = NULL, waiting_since = NULL, processed_at = now(), updated_at = now() WHERE id = :id RETURNING *;",
      'COMMIT;',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * Runs `pgbench -n -f script -c clients -j 2 -T seconds` (or `-t transactions`, per client) and
 * returns its tps.
 */
export function runPgbench({ url, script, clients, seconds, transactions, defines = {} }) {
  const binary = pgbenchPath();
  if (!binary) return Promise.resolve({ tps: Number.NaN, error: 'pgbench not found' });
  const length = transactions ? ['-t', String(transactions)] : ['-T', String(seconds)];
  const args = ['-n', '-f', script, '-c', String(clients), '-j', '2', ...length];
  for (const [key, value] of Object.entries(defines)) args.push('-D', `${key}=${value}`);
  args.push(url);
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      out += chunk;
    });
    child.on('exit', (code) => {
      const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
      const failed = /number of failed transactions: (\d+)/.exec(out);
      resolve({
        tps: match ? Number(match[1]) : Number.NaN,
        failed: failed ? Number(failed[1]) : undefined,
        clients,
        seconds,
        ...(code === 0 && match ? {} : { error: out.split('\n').slice(-6).join(' | ') }),
      });
    });
  });
}
